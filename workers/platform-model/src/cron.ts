/**
 * Cron triggers, as the platform runs them: each expression of a Worker's `[triggers] crons`
 * fires its scheduled handler at every minute it matches, in UTC (docs/platform-model.md, Cron
 * triggers). workerd never fires them, so `npm start` runs this driver and the tests call the
 * handler at the simulated times `fireTimesBetween` gives.
 *
 * The five standard fields are understood (minute, hour, day of month, month, day of week) with
 * `*`, lists, ranges and steps, month and weekday names, and 7 for Sunday. Cloudflare's
 * extensions (`L`, `W`, `#`) are refused rather than guessed: none of the Workers uses them.
 */

const MINUTE_MS = 60_000;
/** The furthest ahead a next fire time is looked for; every valid expression matches within it. */
const SEARCH_YEARS = 5;

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

interface Field {
  min: number;
  max: number;
  names?: string[];
  /** The first name's value: months count from 1, weekdays from 0. */
  nameBase?: number;
}

const FIELDS: Field[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS, nameBase: 1 },
  // 7 is Sunday as well as 0; folded onto 0 below.
  { min: 0, max: 7, names: WEEKDAYS, nameBase: 0 },
];

/** A parsed expression: the values each field allows, and whether the day fields were restricted. */
export interface CronSchedule {
  expression: string;
  minutes: Set<number>;
  hours: Set<number>;
  daysOfMonth: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Both day fields restricted: a day matches when either does (as in Vixie cron and on Cloudflare). */
  eitherDay: boolean;
  /** Only the day-of-week field restricted. */
  weekdayOnly: boolean;
}

function value(text: string, field: Field, expression: string): number {
  const upper = text.toUpperCase();
  const named = field.names?.indexOf(upper) ?? -1;
  const number = named >= 0 ? named + (field.nameBase ?? 0) : /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(number) || number < field.min || number > field.max) {
    throw new Error(`cron "${expression}": "${text}" is not a value of this field (${field.min}-${field.max})`);
  }
  return number;
}

function parseField(text: string, field: Field, expression: string): Set<number> {
  const allowed = new Set<number>();
  for (const part of text.split(",")) {
    const [range = "", stepText, extra] = part.split("/");
    if (extra !== undefined || range === "") throw new Error(`cron "${expression}": cannot read "${part}"`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new Error(`cron "${expression}": bad step in "${part}"`);
    let from: number;
    let to: number;
    if (range === "*") {
      from = field.min;
      to = field.max;
    } else if (range.includes("-")) {
      const [start = "", end = ""] = range.split("-");
      from = value(start, field, expression);
      to = value(end, field, expression);
      if (from > to) throw new Error(`cron "${expression}": range "${range}" runs backwards`);
    } else {
      from = value(range, field, expression);
      // "5/15" means from 5 to the end in steps of 15.
      to = stepText === undefined ? from : field.max;
    }
    for (let v = from; v <= to; v += step) allowed.add(v);
  }
  return allowed;
}

/** Parses a five-field cron expression; throws with the reason when it cannot. */
export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== FIELDS.length) {
    throw new Error(`cron "${expression}": expected 5 fields (minute hour day month weekday)`);
  }
  const [minutes, hours, daysOfMonth, months, weekdays] = parts.map((part, i) =>
    parseField(part, FIELDS[i] as Field, expression),
  ) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  if (weekdays.delete(7)) weekdays.add(0);
  const dayRestricted = parts[2] !== "*";
  const weekdayRestricted = parts[4] !== "*";
  return {
    expression,
    minutes,
    hours,
    daysOfMonth,
    months,
    weekdays,
    eitherDay: dayRestricted && weekdayRestricted,
    weekdayOnly: weekdayRestricted && !dayRestricted,
  };
}

function dayMatches(schedule: CronSchedule, at: Date): boolean {
  const byDate = schedule.daysOfMonth.has(at.getUTCDate());
  const byWeekday = schedule.weekdays.has(at.getUTCDay());
  if (schedule.eitherDay) return byDate || byWeekday;
  return schedule.weekdayOnly ? byWeekday : byDate;
}

/**
 * The first time after `after` (epoch ms, exclusive) at which `cron` fires, in epoch ms: always a
 * whole UTC minute.
 *
 * @example nextFireTime("* * * * *", Date.parse("2026-01-01T00:00:30Z")) // 2026-01-01T00:01:00Z
 */
export function nextFireTime(cron: string | CronSchedule, after: number): number {
  const schedule = typeof cron === "string" ? parseCron(cron) : cron;
  const at = new Date(Math.floor(after / MINUTE_MS) * MINUTE_MS + MINUTE_MS);
  const limit = after + SEARCH_YEARS * 366 * 24 * 60 * MINUTE_MS;
  // Skips a whole month, day or hour at a time when it cannot match.
  while (at.getTime() <= limit) {
    if (!schedule.months.has(at.getUTCMonth() + 1)) {
      at.setUTCMonth(at.getUTCMonth() + 1, 1);
      at.setUTCHours(0, 0, 0, 0);
    } else if (!dayMatches(schedule, at)) {
      at.setUTCDate(at.getUTCDate() + 1);
      at.setUTCHours(0, 0, 0, 0);
    } else if (!schedule.hours.has(at.getUTCHours())) {
      at.setUTCHours(at.getUTCHours() + 1, 0, 0, 0);
    } else if (!schedule.minutes.has(at.getUTCMinutes())) {
      at.setUTCMinutes(at.getUTCMinutes() + 1, 0, 0);
    } else {
      return at.getTime();
    }
  }
  throw new Error(`cron "${schedule.expression}" never fires`);
}

/**
 * Every time `cron` fires in (`from`, `to`], in order: what a test runs the scheduled handler at
 * to stand for that stretch of simulated time.
 */
export function fireTimesBetween(cron: string, from: number, to: number): number[] {
  const schedule = parseCron(cron);
  const times: number[] = [];
  for (let at = nextFireTime(schedule, from); at <= to; at = nextFireTime(schedule, at)) times.push(at);
  return times;
}

/** The slice of a wrangler config that declares cron triggers. */
interface TriggersConfig {
  triggers?: { crons?: string[] };
  env?: Record<string, { triggers?: { crons?: string[] } } | undefined>;
}

/**
 * The cron expressions a parsed wrangler config gives a Worker in `environment`: the
 * environment's own `[env.x.triggers]`, else the top level's (wrangler inherits `triggers`).
 */
export function cronsOf(config: TriggersConfig, environment?: string): string[] {
  const own = environment ? config.env?.[environment]?.triggers : undefined;
  return [...(own?.crons ?? config.triggers?.crons ?? [])];
}

export interface CronTrigger {
  /** The Worker's name, as the runtime knows it. */
  worker: string;
  cron: string;
}

/** Runs one scheduled invocation; the driver does not wait for it before arming the next. */
export type FireCron = (trigger: CronTrigger, scheduledTime: number) => Promise<void>;

/** setTimeout's largest delay; a longer wait is taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Fires each trigger at its schedule's times until stopped, as the platform would: an invocation
 * whose handler is still running does not hold back the next one. A failing invocation is
 * reported to `onError` and the schedule goes on.
 */
export function startCronDriver(
  triggers: readonly CronTrigger[],
  fire: FireCron,
  onError: (trigger: CronTrigger, error: unknown) => void = () => {},
): { stop(): void } {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let stopped = false;
  const arm = (trigger: CronTrigger, schedule: CronSchedule, dueAt: number) => {
    if (stopped) return;
    const wait = Math.min(Math.max(dueAt - Date.now(), 0), MAX_TIMER_MS);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (stopped) return;
      if (Date.now() < dueAt) return arm(trigger, schedule, dueAt);
      fire(trigger, dueAt).catch((error: unknown) => onError(trigger, error));
      // Times missed while the machine slept are skipped, not caught up: the platform skips them too.
      arm(trigger, schedule, nextFireTime(schedule, Math.max(dueAt, Date.now())));
    }, wait);
    timers.add(timer);
  };
  for (const trigger of triggers) {
    const schedule = parseCron(trigger.cron);
    arm(trigger, schedule, nextFireTime(schedule, Date.now()));
  }
  return {
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
