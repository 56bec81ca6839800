import { isWordCharAt, isWordCharBefore } from './fold.js';

/**
 * Many keywords found in one pass over a text: an Aho–Corasick automaton over UTF-16 code units,
 * so the time to scan a message grows with the message and the occurrences found, never with
 * the number of keywords (an app may hold 200,000).
 *
 * The automaton is a trie of the keywords whose nodes also know where to go when the next
 * character leads nowhere (the failure link: the node of the longest proper suffix of what was
 * read that is also a keyword prefix) and which shorter keywords end where they are (the output
 * link). It is held in typed arrays, not an object per node: a node is an index, its edges a
 * run of characters and targets (compressed sparse rows: sorted, or indexed by character for the
 * busy nodes), which keeps 100,000 keywords to ~12 MB and their compilation to a fraction of a
 * second.
 *
 * The keywords are expected folded (fold.ts) and the texts too: the automaton compares code units.
 */

/** What a scan reports each whole-word occurrence to. */
export interface KeywordVisitor {
  /**
   * Keyword `term` (its index in the list the automaton was built from) occurs whole at
   * [start, end) of the text. Returning true ends the scan (the visitor has seen enough).
   */
  found(term: number, start: number, end: number): boolean;
}

/** One whole-word occurrence, as `occurrences` lists them. */
export interface KeywordOccurrence {
  term: number;
  start: number;
  end: number;
}

/** The root node; also "no node" in the output links (the root ends no keyword). */
const ROOT = 0;
/** "No edge", "no keyword". */
const NONE = -1;
/** Where the root goes on these codes (most failures end at the root) is a table, not a search. */
const ROOT_TABLE_SIZE = 128;

/**
 * A node's fields, side by side in one Int32Array (one cache line rather than one per array):
 * its first edge slot (its slots end where the next node's begin), its failure link, its output
 * link, the keyword it ends, and how its slots are laid out: SPARSE, its edges sorted by
 * character (a binary search), or the character of its first slot, each slot then standing for
 * the next character (a direct index; slots without an edge hold NONE).
 */
const STRIDE = 5;
const FIRST_EDGE = 0;
const FAILURE = 1;
const OUTPUT = 2;
const TERM = 3;
const LAYOUT = 4;
const SPARSE = -1;
/**
 * A node with at least this many edges, over a range of characters at most twice as wide, gets
 * direct slots: the nodes near the root, where a scan spends most of its steps, have tens of
 * edges (a-z), and a binary search among them mispredicts a branch on most steps.
 */
const DENSE_MIN_EDGES = 4;

/** The term's first character is a word character: it needs a non-word character (or the start) before it. */
const BOUNDED_BEFORE = 1;
/** The term's last character is a word character: it needs a non-word character (or the end) after it. */
const BOUNDED_AFTER = 2;

/** A multi-keyword whole-word matcher (see the file's comment). */
export class KeywordAutomaton {
  /**
   * STRIDE fields per node, then a row holding only the end of the last node's edges. Nodes are
   * numbered depth first (the trie's creation order), so the nodes of one keyword's path, which
   * a scan walks one after the other, mostly sit together in memory.
   */
  private readonly node: Int32Array;
  /** Each node's edge slots: their characters and the nodes they lead to (NONE: no edge). */
  private readonly edgeChar: Uint16Array;
  private readonly edgeTarget: Int32Array;
  /** The node the root goes to on each ASCII code (the root itself when it has no such edge). */
  private readonly rootNext: Int32Array;
  private readonly termLength: Int32Array;
  /** BOUNDED_BEFORE | BOUNDED_AFTER per keyword. */
  private readonly termBounds: Uint8Array;

  /** The number of keywords. */
  readonly size: number;
  /** The number of trie nodes (the root included). */
  readonly nodeCount: number;

  /**
   * Builds the automaton of `terms`: distinct, non-empty, folded keywords (an empty one is
   * ignored, a repeat reports the first). A keyword's index in `terms` is what scans report.
   */
  constructor(terms: readonly string[]) {
    this.size = terms.length;
    const trie = buildTrie(terms, sortedOrder(terms));
    this.nodeCount = trie.parent.length;
    [this.node, this.edgeChar, this.edgeTarget] = edgeRows(trie);
    this.rootNext = new Int32Array(ROOT_TABLE_SIZE).fill(ROOT);
    for (let e = this.node[ROOT + FIRST_EDGE]!; e < this.node[STRIDE + FIRST_EDGE]!; e++) {
      const c = this.edgeChar[e]!;
      if (c < ROOT_TABLE_SIZE && this.edgeTarget[e] !== NONE) this.rootNext[c] = this.edgeTarget[e]!;
    }
    this.linkFailures();
    this.termLength = new Int32Array(terms.length);
    this.termBounds = new Uint8Array(terms.length);
    for (let t = 0; t < terms.length; t++) {
      const term = terms[t]!;
      this.termLength[t] = term.length;
      this.termBounds[t] = (isWordCharAt(term, 0) ? BOUNDED_BEFORE : 0) | (isWordCharBefore(term, term.length) ? BOUNDED_AFTER : 0);
    }
  }

  /** The bytes the automaton's arrays hold. */
  get bytes(): number {
    return this.node.byteLength + this.edgeChar.byteLength + this.edgeTarget.byteLength + this.rootNext.byteLength + this.termLength.byteLength + this.termBounds.byteLength;
  }

  /**
   * Reports each whole-word occurrence of a keyword in `text` to `visitor`, in the order the
   * occurrences end (the longer first when several end together), until the visitor says stop.
   * Linear in the text's length plus the occurrences of keywords inside it (whole or not).
   */
  scan(text: string, visitor: KeywordVisitor): void {
    const { node, rootNext } = this;
    let at = ROOT;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      // Between keywords a scan sits at the root: that step is inlined.
      at = at === ROOT && c < ROOT_TABLE_SIZE ? rootNext[c]! : this.next(at, c);
      if (at === ROOT) continue;
      let out = node[at * STRIDE + TERM] !== NONE ? at : node[at * STRIDE + OUTPUT]!;
      for (; out !== ROOT; out = node[out * STRIDE + OUTPUT]!) {
        const term = node[out * STRIDE + TERM]!;
        const end = i + 1;
        const start = end - this.termLength[term]!;
        if (this.isWhole(term, text, start, end) && visitor.found(term, start, end)) return;
      }
    }
  }

  /** Every whole-word occurrence in `text` (for tests and tools; scan is the allocation-free way). */
  occurrences(text: string): KeywordOccurrence[] {
    const found: KeywordOccurrence[] = [];
    this.scan(text, {
      found(term, start, end) {
        found.push({ term, start, end });
        return false;
      },
    });
    return found;
  }

  /** Whether the occurrence at [start, end) is not part of a longer word (on the sides where the term ends in a word character). */
  private isWhole(term: number, text: string, start: number, end: number): boolean {
    const bounds = this.termBounds[term]!;
    if ((bounds & BOUNDED_BEFORE) !== 0 && isWordCharBefore(text, start)) return false;
    if ((bounds & BOUNDED_AFTER) !== 0 && isWordCharAt(text, end)) return false;
    return true;
  }

  /**
   * The node after reading `c` at `at`: its edge for `c`, else that of the first node along its
   * failure links that has one, else the root. Each failure link leads to a shallower node, and
   * each character read goes one deeper at most: a scan follows fewer links than it reads characters.
   */
  private next(at: number, c: number): number {
    for (;;) {
      if (at === ROOT) return c < ROOT_TABLE_SIZE ? this.rootNext[c]! : Math.max(this.child(ROOT, c), ROOT);
      const target = this.child(at, c);
      if (target !== NONE) return target;
      at = this.node[at * STRIDE + FAILURE]!;
    }
  }

  /** The child of `at` along `c`, or NONE: a direct slot, or a binary search of the node's sorted edges. */
  private child(at: number, c: number): number {
    const node = this.node;
    let low = node[at * STRIDE + FIRST_EDGE]!;
    let high = node[(at + 1) * STRIDE + FIRST_EDGE]! - 1;
    const layout = node[at * STRIDE + LAYOUT]!;
    if (layout !== SPARSE) {
      const slot = low + c - layout;
      return slot >= low && slot <= high ? this.edgeTarget[slot]! : NONE;
    }
    const edgeChar = this.edgeChar;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const m = edgeChar[middle]!;
      if (m === c) return this.edgeTarget[middle]!;
      if (m < c) low = middle + 1;
      else high = middle - 1;
    }
    return NONE;
  }

  /**
   * Failure and output links, breadth first (a node's links are made from shallower nodes'): a
   * child's failure is where its parent's failure link goes on the child's character; its output
   * link is its failure if that ends a keyword, else its failure's output link.
   */
  private linkFailures(): void {
    const node = this.node;
    const queue = new Int32Array(this.nodeCount);
    let head = 0;
    let tail = 1; // queue[0] is the root
    while (head < tail) {
      const parent = queue[head++]!;
      for (let e = node[parent * STRIDE + FIRST_EDGE]!; e < node[(parent + 1) * STRIDE + FIRST_EDGE]!; e++) {
        const child = this.edgeTarget[e]!;
        if (child === NONE) continue;
        const failure = parent === ROOT ? ROOT : this.next(node[parent * STRIDE + FAILURE]!, this.edgeChar[e]!);
        node[child * STRIDE + FAILURE] = failure;
        node[child * STRIDE + OUTPUT] = node[failure * STRIDE + TERM] !== NONE ? failure : node[failure * STRIDE + OUTPUT]!;
        queue[tail++] = child;
      }
    }
  }
}

/** The indices of `terms` in code-unit order (what `<` on strings compares). */
function sortedOrder(terms: readonly string[]): Int32Array {
  const order = new Int32Array(terms.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => {
    const x = terms[a]!;
    const y = terms[b]!;
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** A trie as buildTrie makes it: nodes numbered in creation order. */
interface Trie {
  /** Each node's parent (the root's is NONE). */
  parent: Int32Array;
  /** The character of the edge into each node. */
  char: Uint16Array;
  /** The keyword each node ends, or NONE. */
  termAt: Int32Array;
}

/**
 * The trie of the keywords taken in sorted order: each keyword shares with the one before it the
 * path of their common prefix and adds nodes for the rest. Taken in that order, the children of
 * each node are created in increasing order of their character (which edgeRows relies on), and
 * no lookup of an existing child is ever needed.
 */
function buildTrie(terms: readonly string[], order: Int32Array): Trie {
  let capacity = 1;
  for (const term of terms) capacity += term.length;
  const parent = new Int32Array(capacity);
  const char = new Uint16Array(capacity);
  const termAt = new Int32Array(capacity).fill(NONE);
  parent[ROOT] = NONE;
  let nodes = 1;
  /** pathNode[d]: the node of the previous keyword's first d characters. */
  const pathNode: number[] = [ROOT];
  let previous = '';
  for (let k = 0; k < order.length; k++) {
    const index = order[k]!;
    const term = terms[index]!;
    const shared = commonPrefixLength(previous, term);
    let at = pathNode[shared]!;
    for (let d = shared; d < term.length; d++) {
      parent[nodes] = at;
      char[nodes] = term.charCodeAt(d);
      at = nodes++;
      pathNode[d + 1] = at;
    }
    // A repeat ends on the node of the first (the sort is stable), which keeps it.
    if (termAt[at] === NONE && at !== ROOT) termAt[at] = index;
    previous = term;
  }
  return { parent: parent.subarray(0, nodes), char: char.subarray(0, nodes), termAt: termAt.subarray(0, nodes) };
}

function commonPrefixLength(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  let i = 0;
  while (i < length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * The node rows (FIRST_EDGE, TERM and LAYOUT filled; the links are linkFailures') and the edge
 * slots as compressed sparse rows: each node's slots are one run, its edges in order of their
 * character (buildTrie created each node's children in that order), or direct slots.
 */
function edgeRows(trie: Trie): [Int32Array, Uint16Array, Int32Array] {
  const nodes = trie.parent.length;
  const edges = new Int32Array(nodes);
  const lowest = new Int32Array(nodes);
  const highest = new Int32Array(nodes);
  for (let n = 1; n < nodes; n++) {
    const parent = trie.parent[n]!;
    if (edges[parent]!++ === 0) lowest[parent] = trie.char[n]!;
    highest[parent] = trie.char[n]!;
  }
  const node = new Int32Array((nodes + 1) * STRIDE);
  let slots = 0;
  for (let n = 0; n < nodes; n++) {
    const span = highest[n]! - lowest[n]! + 1;
    const dense = edges[n]! >= DENSE_MIN_EDGES && span <= 2 * edges[n]!;
    node[n * STRIDE + FIRST_EDGE] = slots;
    node[n * STRIDE + TERM] = trie.termAt[n]!;
    node[n * STRIDE + LAYOUT] = dense ? lowest[n]! : SPARSE;
    slots += dense ? span : edges[n]!;
  }
  node[nodes * STRIDE + FIRST_EDGE] = slots;
  node[nodes * STRIDE + LAYOUT] = SPARSE;
  const edgeChar = new Uint16Array(slots);
  const edgeTarget = new Int32Array(slots).fill(NONE);
  for (let n = 0; n < nodes; n++) {
    const layout = node[n * STRIDE + LAYOUT]!;
    if (layout === SPARSE) continue;
    const first = node[n * STRIDE + FIRST_EDGE]!;
    for (let slot = first; slot < node[(n + 1) * STRIDE + FIRST_EDGE]!; slot++) edgeChar[slot] = layout + slot - first;
  }
  // The next free slot of each sparse node.
  const cursor = new Int32Array(nodes);
  for (let n = 0; n < nodes; n++) cursor[n] = node[n * STRIDE + FIRST_EDGE]!;
  for (let n = 1; n < nodes; n++) {
    const parent = trie.parent[n]!;
    const layout = node[parent * STRIDE + LAYOUT]!;
    const slot = layout === SPARSE ? cursor[parent]!++ : node[parent * STRIDE + FIRST_EDGE]! + trie.char[n]! - layout;
    edgeChar[slot] = trie.char[n]!;
    edgeTarget[slot] = n;
  }
  return [node, edgeChar, edgeTarget];
}
