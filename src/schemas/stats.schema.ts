import { Type } from '@sinclair/typebox';
import { Data } from './common.schema.js';

/** The latest date a range may name: the end of the year 9999, in milliseconds. */
const DATE_MAX = 253_402_300_799_999;

const DateInput = (description: string) =>
  Type.Integer({
    minimum: 0,
    maximum: DATE_MAX,
    description: `${description} Unix seconds, or milliseconds (a value of 10^11 or more is read as milliseconds).`,
  });

export const UsageQuery = Type.Object({
  fromDate: DateInput('Start of the range.'),
  toDate: DateInput('End of the range: at most 31 days after fromDate.'),
});

export const MessagesQuery = Type.Object({
  fromDate: Type.Optional(DateInput('Start of the range (a Parley extension; with toDate). Without a range, the last hour.')),
  toDate: Type.Optional(DateInput('End of the range (a Parley extension; with fromDate): at most a day after fromDate.')),
});

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const MsString = (description: string) => Type.String({ pattern: '^[0-9]+$', description: `${description} Milliseconds since the epoch, as a string.` });

export const UsageResponse = Data(
  Type.Object({
    metrics: Type.Object({
      audio_minutes: Count('Minutes of audio calls: always 0, Parley has no calls.'),
      video_minutes: Count('Minutes of video calls: always 0, Parley has no calls.'),
      recorded_minutes: Count('Minutes of recorded calls: always 0, Parley has no calls.'),
      active_users: Count('Distinct users who sent a message, marked one delivered or read, reacted, or changed groups, blocks or messages (as onBehalfOf) in the UTC hours the range touches.'),
      concurrent_users: Count('Peak of connected users: always 0, Parley has no user-facing connections yet.'),
    }),
    time_range: Type.Object({
      fromDate: Type.Integer({ description: 'The range asked for: its start, in milliseconds.' }),
      toDate: Type.Integer({ description: 'The range asked for: its end, in milliseconds.' }),
    }),
  }),
);

export const MessagesResponse = Data(
  Type.Object({
    startTime: MsString('Start of the first point.'),
    endTime: MsString('End of the last point.'),
    dataPoints: Type.Array(
      Type.Object({
        messagesSent: Count('Messages sent in the five minutes (messages and custom messages, not action messages).'),
        readReceipts: Count('Read receipts (mark-as-read calls) in the five minutes.'),
        deliveryReceipts: Count('Delivery receipts (mark-as-delivered calls) in the five minutes.'),
        startTime: MsString('Start of the five minutes.'),
        endTime: MsString('End of the five minutes.'),
      }),
      { description: 'One point per five minutes of the span, in order, zeros included.' },
    ),
    appId: Type.String({ description: 'The app.' }),
  }),
);
