/**
 * The FIFO behind the rate limiter. Hand-written because waiters leave from the middle (abort,
 * queue timeout) as often as from the head, and a doubly linked list makes both O(1), where an
 * array would make 1,000 waiters cost O(n^2) in shifts or splices.
 */

/** A handle to one queued value; pass it to `RateLimitQueue.remove`. */
export interface RateLimitQueueEntry<T> {
  /** The queued value. */
  readonly value: T;
}

interface Node<T> extends RateLimitQueueEntry<T> {
  prev: Node<T> | undefined;
  next: Node<T> | undefined;
  linked: boolean;
}

/**
 * A first-in, first-out queue with O(1) push, shift and removal of any entry.
 * @example
 * const queue = new RateLimitQueue<string>();
 * const b = (queue.push("a"), queue.push("b"));
 * queue.remove(b); // true
 * queue.shift(); // "a"
 */
export class RateLimitQueue<T> {
  #head: Node<T> | undefined;
  #tail: Node<T> | undefined;
  #size = 0;

  /** How many values are queued. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends a value at the tail.
   * @param value the value to queue
   * @returns a handle for `remove`
   */
  push(value: T): RateLimitQueueEntry<T> {
    const node: Node<T> = { value, prev: this.#tail, next: undefined, linked: true };
    if (this.#tail) this.#tail.next = node;
    else this.#head = node;
    this.#tail = node;
    this.#size++;
    return node;
  }

  /**
   * The value at the head, left in place.
   * @returns the oldest value, or undefined when empty
   */
  peek(): T | undefined {
    return this.#head?.value;
  }

  /**
   * Removes and returns the value at the head.
   * @returns the oldest value, or undefined when empty
   */
  shift(): T | undefined {
    const head = this.#head;
    if (!head) return undefined;
    this.#unlink(head);
    return head.value;
  }

  /**
   * Removes an entry wherever it is.
   * @param entry a handle returned by `push` of this queue
   * @returns false when the entry had already left the queue (shifted or removed)
   */
  remove(entry: RateLimitQueueEntry<T>): boolean {
    const node = entry as Node<T>;
    if (!node.linked) return false;
    this.#unlink(node);
    return true;
  }

  #unlink(node: Node<T>): void {
    if (node.prev) node.prev.next = node.next;
    else this.#head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.#tail = node.prev;
    node.prev = undefined;
    node.next = undefined;
    node.linked = false;
    this.#size--;
  }
}
