/**
 * What Parley's built-in rules read (domain/moderation/defaults.ts): a list of profane words and
 * slurs, and patterns for e-mail addresses, phone numbers and links. Every built-in rule is
 * off until the app enables it.
 *
 * The word list holds words whose ordinary use is profane or a slur, matched as whole words
 * (case and accents folded): not words that ordinary messages use in other senses ("kill",
 * "death", "beat", "murder", "cock", "dick", "fag", "spunk", and the medical words), which
 * the vendor's list holds and which would block "I could kill for a coffee". An app that wants
 * more adds its own list.
 */
export const PROFANITY_WORDS: readonly string[] = [
  'arsehole',
  'asshole',
  'assholes',
  'bastard',
  'bastards',
  'bitch',
  'bitches',
  'bitchy',
  'bollocks',
  'bullshit',
  'chink',
  'chinks',
  'clusterfuck',
  'cocksucker',
  'cocksuckers',
  'cunt',
  'cunts',
  'dickhead',
  'dickheads',
  'dipshit',
  'douchebag',
  'dyke',
  'faggot',
  'faggots',
  'fuck',
  'fucked',
  'fucker',
  'fuckers',
  'fuckface',
  'fuckhead',
  'fucking',
  'fucks',
  'fuckwit',
  'goddamn',
  'gook',
  'gooks',
  'hellbitch',
  'jackass',
  'jizz',
  'kike',
  'kikes',
  'motherfucker',
  'motherfuckers',
  'motherfucking',
  'nigga',
  'niggas',
  'nigger',
  'niggers',
  'piss off',
  'pissed off',
  'prick',
  'pricks',
  'pussy',
  'scumbag',
  'shit',
  'shite',
  'shithead',
  'shitheads',
  'shits',
  'shitty',
  'slut',
  'sluts',
  'spic',
  'spics',
  'tranny',
  'twat',
  'twats',
  'wank',
  'wanker',
  'wankers',
  'wetback',
  'whore',
  'whores',
  'wop',
];

/** An e-mail address anywhere in the text. */
export const EMAIL_PATTERN = '[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}';

/**
 * A phone number anywhere in the text: an optional country code and area code, then three and
 * four digits (`+1 (415) 555-2671`, `415.555.2671`, `555 2671`); ten to fifteen digits in a row;
 * or five pairs (`06 12 34 56 78`). Not digits that run on into other digits, so years
 * (`2024-2025`), dates and prices do not match.
 */
export const PHONE_PATTERN =
  '(?:^|[^0-9+])(?:\\+\\d{1,3}[\\s.-]?)?(?:\\(\\d{2,4}\\)[\\s.-]?|\\d{2,4}[\\s.-])?\\d{3}[\\s.-]\\d{4}(?:$|[^0-9])' +
  '|(?:^|[^0-9])\\+?\\d{10,15}(?:$|[^0-9])' +
  '|(?:^|[^0-9])\\d{2}(?:[\\s.-]\\d{2}){4}(?:$|[^0-9])';

/** A link: a URL with a scheme, `www.`, or a host name ending in a common top-level domain. */
export const LINK_PATTERN =
  '(?i:(?:https?://|ftp://|www\\.)[^\\s]+' +
  '|(?:^|[^a-z0-9@.-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\.)+(?:com|net|org|io|co|me|app|dev|info|biz|xyz|ly|gg|tv|link|site|online|shop|ru|cn|uk|de|fr|in|br)(?:$|[^a-z0-9.-]))';
