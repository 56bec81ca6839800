// Parley's demo chat page (docs/demo.md): a user signs in with an app id, a uid and one of the
// user's auth tokens, and chats 1:1 (or in a group) through @parley/client, the library's built
// ES modules served beside this file. Live events, typing and read receipts come over the
// WebSocket gateway; sends, history, conversations and read marks go by REST as the token's
// user. The credentials stay in this tab's sessionStorage, never in a URL.
import { createClient } from './client/index.js';

const CREDENTIALS = 'parley-demo';
/** A typing indicator that saw no end is dropped after this (the server ends one after 8 s). */
const TYPING_SHOWN_MS = 10_000;

const $ = (id) => document.getElementById(id);
/** Parley's base: the page is served at <base>/demo/. */
const BASE_URL = new URL('../', location.href).href;

/** @type {{ appId: string, uid: string, authToken: string } | undefined} */
let session;
/** @type {import('./client/index.js').ParleyClient | undefined} */
let client;
/** The open conversation: `{ receiver, receiverType }`. */
let current;
/** The open conversation's messages on the page, by id. */
const shown = new Map();
/** Own messages up to this id were read by the other side of the open conversation. */
let readUpTo;
/** The newest message of the other side marked read. */
let markedUpTo;
/** Names by uid, as the conversations and messages tell them. */
const names = new Map();
/** Who is typing in the open conversation: uid → the timer that forgets them. */
const typing = new Map();
/** The draft being sent and its muid: sending it again (after a failure) reuses the muid, so it is stored once. */
let pending;
let refreshTimer;

const uidOf = (text) => text.trim().toLowerCase();
const nameOf = (uid) => names.get(uid) ?? uid;
const isId = (value) => typeof value === 'string' && /^[0-9]{1,30}$/.test(value);
const idOrder = (a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);
const lastEventKey = () => `parley-demo:lastEventId:${session.appId}:${session.uid}`;

function showError(id, error) {
  $(id).textContent = error ? (error.code ? `${error.code}: ${error.message}` : String(error.message ?? error)) : '';
}

function newMuid() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `demo-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

// ---- Signing in and out ----

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault();
  const credentials = { appId: $('app-id').value.trim(), uid: uidOf($('uid').value), authToken: $('auth-token').value.trim() };
  $('auth-token').value = '';
  void start(credentials);
});

$('sign-out').addEventListener('click', () => {
  client?.close();
  client = undefined;
  sessionStorage.removeItem(CREDENTIALS);
  location.reload();
});

async function start(credentials) {
  showError('sign-in-error');
  const candidate = createClient({
    baseUrl: BASE_URL,
    appId: credentials.appId,
    authToken: credentials.authToken,
    lastEventId: sessionStorage.getItem(`parley-demo:lastEventId:${credentials.appId}:${credentials.uid}`) ?? undefined,
    onResync: () => reload(),
  });
  try {
    // The token's own user (PUT /v3/me, as the vendor's SDK logs in): it must be the uid given.
    const me = (await candidate.rest.call('PUT', '/v3/me', undefined, {})).data;
    if (me?.uid !== credentials.uid) throw new Error(`This token is ${me?.uid}'s, not ${credentials.uid}'s.`);
    names.set(me.uid, me.name ?? me.uid);
  } catch (error) {
    sessionStorage.removeItem(CREDENTIALS);
    showError('sign-in-error', error);
    return;
  }
  session = credentials;
  client = candidate;
  sessionStorage.setItem(CREDENTIALS, JSON.stringify(credentials));
  $('sign-in').hidden = true;
  $('chat').hidden = false;
  $('sign-out').hidden = false;
  $('me').textContent = `${nameOf(session.uid)} (${session.uid})`;
  client.on('state', showState);
  client.on('event', onEvent);
  client.on('typing', onTyping);
  client.on('server_error', (frame) => showError('chat-error', frame));
  client.connect();
  await loadConversations();
}

function showState(state, detail) {
  const text = { idle: 'not connected', connecting: 'connecting…', open: 'connected', closed: 'signed out', unauthorized: 'the token was refused: sign in again' };
  $('state').dataset.state = state;
  $('state').textContent = state === 'reconnecting' ? `reconnecting (attempt ${detail.attempt ?? 1})…` : (text[state] ?? state);
  if (state !== 'open') clearTyping();
}

// ---- Conversations ----

async function loadConversations() {
  try {
    const page = await client.rest.conversations({ perPage: 30 });
    const list = $('conversations');
    list.replaceChildren();
    for (const conversation of page.data) {
      const other = conversation.conversationWith ?? {};
      const receiverType = conversation.conversationType === 'group' ? 'group' : 'user';
      const receiver = receiverType === 'group' ? other.guid : other.uid;
      if (typeof receiver !== 'string') continue;
      if (receiverType === 'user') names.set(receiver, other.name ?? receiver);
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.receiver = receiver;
      const unread = Number(conversation.unreadMessageCount ?? 0);
      const last = conversation.lastMessage?.data?.text;
      button.textContent = `${other.name ?? receiver}${unread > 0 ? ` (${unread})` : ''}${typeof last === 'string' ? ` — ${last.slice(0, 40)}` : ''}`;
      button.addEventListener('click', () => void open(receiver, receiverType));
      item.append(button);
      list.append(item);
    }
  } catch (error) {
    showError('chat-error', error);
  }
}

/** The list again soon (new messages move conversations and unread counts). */
function refreshConversationsSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void loadConversations(), 500);
}

$('open').addEventListener('submit', (event) => {
  event.preventDefault();
  const peer = uidOf($('peer').value);
  if (peer) void open(peer, 'user');
});

async function open(receiver, receiverType) {
  if (receiverType === 'user') {
    // The other user's profile (get-user): their name, and whether there is such a user.
    try {
      const user = (await client.rest.call('GET', `/v3/users/${encodeURIComponent(receiver)}`)).data;
      names.set(receiver, user?.name ?? receiver);
    } catch (error) {
      showError('chat-error', error);
      return;
    }
  }
  showError('chat-error');
  current = { receiver, receiverType };
  shown.clear();
  readUpTo = undefined;
  markedUpTo = undefined;
  pending = undefined;
  clearTyping();
  $('messages').replaceChildren();
  $('conversation').hidden = false;
  $('title').textContent = receiverType === 'group' ? `Group ${receiver}` : nameOf(receiver);
  $('draft').value = '';
  await loadHistory(current);
}

async function loadHistory(conversation) {
  try {
    const page = await client.rest.messages(conversation, { limit: 50 });
    if (conversation !== current) return;
    for (const message of page.data) render(message);
    markShownRead();
  } catch (error) {
    showError('chat-error', error);
  }
}

/** After resync_required (too much was missed to replay): what the page shows, by REST. */
async function reload() {
  await loadConversations();
  if (!current) return;
  shown.clear();
  $('messages').replaceChildren();
  await loadHistory(current);
}

// ---- Messages ----

/** Whether a message is the open conversation's. */
function inCurrent(message) {
  if (!current || !message) return false;
  if (current.receiverType === 'group') return message.receiverType === 'group' && message.receiver === current.receiver;
  const me = session.uid;
  return message.receiverType === 'user' && ((message.sender === me && message.receiver === current.receiver) || (message.sender === current.receiver && message.receiver === me));
}

/** Shows a message of the open conversation once, in id order, whether it came by REST or by event. */
function render(message) {
  const id = String(message.id);
  // Action messages (an edit, a delete, a member change) are not bubbles: their events update the message they name.
  if (!isId(id) || message.category === 'action' || !inCurrent(message)) return;
  const senderName = message.data?.entities?.sender?.entity?.name;
  if (typeof senderName === 'string') names.set(message.sender, senderName);
  const own = message.sender === session.uid;
  let item = shown.get(id);
  if (!item) {
    item = document.createElement('li');
    item.dataset.id = id;
    item.dataset.sender = message.sender;
    item.className = own ? 'own' : 'theirs';
    const who = document.createElement('strong');
    who.textContent = `${own ? 'You' : nameOf(message.sender)}: `;
    const text = document.createElement('span');
    text.className = 'text';
    const receipt = document.createElement('span');
    receipt.className = 'receipt';
    item.append(who, text, receipt);
    const list = $('messages');
    const after = [...list.children].find((other) => idOrder(other.dataset.id, id) > 0);
    list.insertBefore(item, after ?? null);
    shown.set(id, item);
    list.scrollTop = list.scrollHeight;
  }
  const body = message.data?.text;
  item.querySelector('.text').textContent = message.deletedAt ? '(deleted)' : typeof body === 'string' ? body : `[${message.type}]`;
  if (own && (message.readAt || (readUpTo && idOrder(id, readUpTo) <= 0))) item.querySelector('.receipt').textContent = 'Read';
}

/** Marks the open conversation read up to the newest message of the other side shown, once it is on screen. */
function markShownRead() {
  if (!current || document.visibilityState !== 'visible') return;
  const newest = [...shown.values()].filter((item) => item.dataset.sender !== session.uid).at(-1)?.dataset.id;
  if (!newest || (markedUpTo && idOrder(newest, markedUpTo) <= 0)) return;
  markedUpTo = newest;
  const conversation = current;
  client.rest.markRead(conversation, newest).catch((error) => {
    if (conversation === current) markedUpTo = undefined;
    showError('chat-error', error);
  });
}
document.addEventListener('visibilitychange', markShownRead);

function onEvent(event) {
  sessionStorage.setItem(lastEventKey(), event.id);
  const data = event.data;
  switch (event.trigger) {
    case 'message_sent':
      if (inCurrent(data.message)) {
        render(data.message);
        if (data.message.sender !== session.uid) markShownRead();
      }
      refreshConversationsSoon();
      break;
    case 'message_edited':
    case 'message_deleted': {
      // The action message names the message as it is now.
      const changed = data.message?.data?.entities?.on?.entity;
      if (changed && shown.has(String(changed.id))) render(changed);
      refreshConversationsSoon();
      break;
    }
    case 'message_read_receipt':
      onReadReceipt(data);
      break;
  }
}

/** Another user read the conversation up to `body.messageId`: own messages up to it show "Read". */
function onReadReceipt(receipt) {
  const reader = receipt.sender;
  const upTo = String(receipt.body?.messageId ?? '');
  if (!current || reader === session.uid || !isId(upTo)) return;
  const conversation = receipt.receiverType === 'group' ? receipt.receiver : receipt.receiver === session.uid ? reader : undefined;
  if (receipt.receiverType !== current.receiverType || conversation !== current.receiver) return;
  if (!readUpTo || idOrder(upTo, readUpTo) > 0) readUpTo = upTo;
  for (const [id, item] of shown) {
    if (item.dataset.sender === session.uid && idOrder(id, readUpTo) <= 0) item.querySelector('.receipt').textContent = 'Read';
  }
}

// ---- Typing ----

function onTyping(frame) {
  if (!current || frame.sender === session.uid) return;
  const here =
    current.receiverType === 'group'
      ? frame.receiverType === 'group' && frame.receiver === current.receiver
      : frame.receiverType === 'user' && frame.sender === current.receiver && frame.receiver === session.uid;
  if (!here) return;
  clearTimeout(typing.get(frame.sender));
  if (frame.type === 'typing_started') {
    typing.set(
      frame.sender,
      setTimeout(() => {
        typing.delete(frame.sender);
        showTyping();
      }, TYPING_SHOWN_MS),
    );
  } else {
    typing.delete(frame.sender);
  }
  showTyping();
}

function showTyping() {
  const who = [...typing.keys()].map(nameOf);
  $('typing').textContent = who.length === 0 ? '' : `${who.join(', ')} ${who.length === 1 ? 'is' : 'are'} typing…`;
}

function clearTyping() {
  for (const timer of typing.values()) clearTimeout(timer);
  typing.clear();
  showTyping();
}

// ---- Sending ----

$('draft').addEventListener('input', () => {
  if (!current) return;
  if ($('draft').value) client.typing(current);
  else client.stopTyping(current);
});

$('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  void send();
});

async function send() {
  const text = $('draft').value.trim();
  if (!current || !text) return;
  if (pending?.text !== text) pending = { text, muid: newMuid() };
  const conversation = current;
  const { muid } = pending;
  try {
    const message = await client.sendMessage({ receiver: conversation.receiver, receiverType: conversation.receiverType, text, muid });
    showError('chat-error');
    if (conversation !== current) return;
    if (pending?.muid === muid) {
      pending = undefined;
      if ($('draft').value.trim() === text) $('draft').value = '';
    }
    render(message);
  } catch (error) {
    showError('chat-error', { code: error.code, message: `Not sent (${error.message}): press Send to try again.` });
  }
}

// ---- A tab that signed in before (a reload) goes on where it was. ----

const saved = (() => {
  try {
    return JSON.parse(sessionStorage.getItem(CREDENTIALS) ?? 'null');
  } catch {
    return null;
  }
})();
if (saved && typeof saved.appId === 'string' && typeof saved.uid === 'string' && typeof saved.authToken === 'string') void start(saved);
