// The chat view's state, free of the `vscode` module so that it can be unit-tested with node --test:
// what to post to the webview for each chat event, for the codev/chat answer, and when the server
// goes away mid-turn.
import { escapeHtml, outcomeText, renderMarkdown, ToolOutcome } from "./logic";

/** A `codev/chatEvent` (PROTOCOL.md "Chat events"). */
export interface ChatEvent {
  sessionId: string;
  type: "text" | "toolUse" | "toolResult" | "status" | "done";
  delta?: string;
  toolUseId?: string;
  name?: string;
  input?: unknown;
  outcome?: ToolOutcome;
  status?: string;
  content?: unknown;
  stopReason?: string;
}

/** The `codev/chat` answer. */
export interface ChatResult {
  sessionId?: string;
  stopReason?: string;
  text?: string;
  error?: string;
}

/** A message to the webview script (see ChatViewProvider.html). */
export interface ViewMessage {
  type: "user" | "text" | "toolUse" | "toolResult" | "error" | "done";
  html?: string;
  status?: string;
  stopReason?: string;
}

/**
 * One chat session as the view shows it. Events stream the turn; the `codev/chat` answer closes it.
 * When no text event arrived (a client that missed the notifications, e.g. one attached too late),
 * the answer's `text` is shown instead, and a turn always ends with a `done` (which disables Stop)
 * — also when the server restarts in the middle of it.
 */
export class ChatTranscript {
  sessionId?: string;
  busy = false;
  private text = "";
  private streamed = false;
  private ended = true;
  private turn = 0;

  constructor(private readonly post: (message: ViewMessage) => void) {}

  /** A prompt was sent; returns the turn's number, for {@link finish} and {@link fail}. */
  begin(prompt: string): number {
    this.turn += 1;
    this.text = "";
    this.streamed = false;
    this.ended = false;
    this.busy = true;
    this.post({ type: "user", html: escapeHtml(prompt) });
    return this.turn;
  }

  onEvent(ev: ChatEvent): void {
    this.sessionId = ev.sessionId ?? this.sessionId;
    if (ev.type === "text") {
      this.streamed = true;
      this.text += ev.delta ?? "";
      this.post({ type: "text", html: renderMarkdown(this.text) });
    } else if (ev.type === "toolUse") {
      this.text = "";
      const input = JSON.stringify(ev.input ?? {});
      this.post({ type: "toolUse", html: `<b>${escapeHtml(ev.name ?? "?")}</b> <code>${escapeHtml(input.slice(0, 200))}</code>` });
    } else if (ev.type === "toolResult") {
      const o = (ev.outcome ?? ev) as ToolOutcome;
      this.post({ type: "toolResult", status: o.status, html: escapeHtml(outcomeText(o).slice(0, 500)) });
    } else if (ev.type === "done") {
      this.end(ev.stopReason);
    }
  }

  /** The `codev/chat` answer of turn `turn` arrived (after every event of the turn). */
  finish(result: ChatResult, turn: number): void {
    if (turn !== this.turn || this.ended) return; // a turn that a restart already ended
    if (result.sessionId) this.sessionId = result.sessionId;
    if (!this.streamed && result.text) {
      this.streamed = true;
      this.post({ type: "text", html: renderMarkdown(result.text) });
    }
    this.end(result.stopReason ?? "done");
  }

  /** Turn `turn`'s request failed (the server answered with an error, or went away). */
  fail(message: string, turn: number): void {
    if (turn !== this.turn || this.ended) return;
    this.post({ type: "error", html: escapeHtml(message) });
    this.end("error");
  }

  /** The server is being restarted: a running turn is over (its session is gone with the server). */
  reset(reason: string): void {
    if (this.busy) this.end(reason);
    this.sessionId = undefined;
  }

  private end(stopReason: string | undefined): void {
    this.busy = false;
    this.text = "";
    if (this.ended) return;
    this.ended = true;
    this.post({ type: "done", stopReason });
  }
}
