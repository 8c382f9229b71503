/**
 * Model time for a closed-loop simulation (docs/platform-model.md, D1): a set of clients, each with
 * its own clock, whose round trips are served in the order of those clocks, not of the real clock.
 * A database's service time then advances the clocks instead of being waited for, so what a run
 * measures is the databases' bound alone, whatever else the machine is doing.
 *
 * The order is kept conservatively: a round trip is let through only once every client still
 * running has asked for its next one, and then the one asked for earliest in model time goes first.
 * No later request can then arrive with an earlier time, because a client's clock only moves
 * forward. One round trip runs at a time, so a run takes the real time of its queries one after
 * another. A client that stops must say so (`done`), or the others wait for it.
 */
export class ModelTime {
  readonly #running = new Set<ModelClient>();
  readonly #waiting: { client: ModelClient; go: () => void }[] = [];
  #made = 0;

  /** A new client, its clock at `now` (model milliseconds). */
  client(now = 0): ModelClient {
    const client = new ModelClient(this, this.#made++, now);
    this.#running.add(client);
    return client;
  }

  /** Resolves when it is `client`'s turn for one round trip. */
  turn(client: ModelClient): Promise<void> {
    if (!this.#running.has(client)) throw new Error("a model-time client asked for a turn after it was done");
    if (this.#waiting.some((entry) => entry.client === client)) {
      throw new Error("a model-time client has one round trip in flight at a time");
    }
    return new Promise((go) => {
      this.#waiting.push({ client, go });
      this.#next();
    });
  }

  finish(client: ModelClient): void {
    this.#running.delete(client);
    this.#next();
  }

  #next(): void {
    if (this.#waiting.length === 0 || this.#waiting.length < this.#running.size) return;
    // Earliest clock first; the order the clients were made in breaks a tie, so a run is repeatable.
    const before = (a: ModelClient, b: ModelClient) => a.now < b.now || (a.now === b.now && a.order < b.order);
    let earliest = 0;
    for (let i = 1; i < this.#waiting.length; i++) {
      const [candidate, best] = [this.#waiting[i], this.#waiting[earliest]];
      if (candidate && best && before(candidate.client, best.client)) earliest = i;
    }
    const [entry] = this.#waiting.splice(earliest, 1);
    entry?.go();
  }
}

/** One client of the modelled databases: a request stream with its own clock. */
export class ModelClient {
  constructor(
    readonly time: ModelTime,
    /** Its place among the clients made, which breaks a tie between equal clocks. */
    readonly order: number,
    /** This client's clock, in model milliseconds. */
    public now: number,
  ) {}

  /** This client makes no more round trips. */
  done(): void {
    this.time.finish(this);
  }
}
