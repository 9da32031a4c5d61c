// The extension's own logic, free of the `vscode` module so it can be unit-tested with node --test.

/**
 * Secrets Codev knows by name: offered first by "Codev: Set API Key…". Any other name can be typed
 * there too (DEEPSEEK_API_KEY, ANTHROPIC_AUTH_TOKEN…); those names are recorded (see
 * {@link recordSecretName}) so that their values reach the server as well. Values live in VS Code's
 * SecretStorage under `codev.<NAME>`, and only ever go to the server's environment.
 */
export const SECRET_KEYS = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "TAVILY_API_KEY",
  "JINA_API_KEY",
  "AMAP_API_KEY",
  "GOOGLE_MAPS_API_KEY",
] as const;

/** The extension's globalState key holding the custom secret names the user stored. */
export const SECRET_NAMES_STATE = "codev.secretNames";

/** Where a secret's value is kept in SecretStorage. */
export function secretStorageKey(name: string): string {
  return `codev.${name}`;
}

/** Is `name` usable as an environment variable name (letters, digits, `_`, not starting with a digit)? */
export function isEnvName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

/** Does a variable with this name look like it holds a secret (so it belongs in SecretStorage)? */
export function looksSecret(name: string): boolean {
  return (SECRET_KEYS as readonly string[]).includes(name) || /(_KEY|_TOKEN|SECRET|PASSWORD)$/i.test(name);
}

/** Every secret name whose value goes to the server: the known ones, then the recorded custom ones. */
export function secretNames(recorded: readonly unknown[] | undefined): string[] {
  const names: string[] = [...SECRET_KEYS];
  for (const n of recorded ?? []) {
    if (typeof n === "string" && isEnvName(n) && !names.includes(n)) names.push(n);
  }
  return names;
}

/** The custom names to record after storing (`stored`) or deleting the secret `name`. */
export function recordSecretName(recorded: readonly string[], name: string, stored: boolean): string[] {
  const rest = recorded.filter((n) => n !== name && isEnvName(n) && !(SECRET_KEYS as readonly string[]).includes(n));
  if (stored && !(SECRET_KEYS as readonly string[]).includes(name)) rest.push(name);
  return rest.sort();
}

/** Read the secrets of `names` from a SecretStorage-like getter: the values the server's environment gets. */
export async function readSecrets(
  names: readonly string[],
  get: (key: string) => PromiseLike<string | undefined>,
): Promise<Record<string, string | undefined>> {
  const values: Record<string, string | undefined> = {};
  for (const name of names) values[name] = await get(secretStorageKey(name));
  return values;
}

export interface SecretPickItem {
  label: string;
  description: string;
  /** The variable name chosen; empty when the typed text cannot be one. */
  name: string;
}

/**
 * The items of "Codev: Set API Key…" while the user has typed `typed`: the known names, the recorded
 * custom names, and — when the typed text is a new name — that name first, so any variable can be set.
 */
export function secretPickItems(typed: string, recorded: readonly string[], stored: ReadonlySet<string>): SecretPickItem[] {
  const names = secretNames(recorded);
  const items: SecretPickItem[] = names.map((name) => ({
    label: name,
    description: [
      (SECRET_KEYS as readonly string[]).includes(name) ? "" : "custom",
      stored.has(name) ? "stored" : "",
    ]
      .filter(Boolean)
      .join(", "),
    name,
  }));
  const text = typed.trim();
  if (text && !names.includes(text)) {
    items.unshift(
      isEnvName(text)
        ? { label: text, description: "a new name: store a secret under it", name: text }
        : { label: text, description: "not a valid environment variable name (A-Z, 0-9, _)", name: "" },
    );
  }
  return items;
}

export const PERMISSION_MODES = ["default", "acceptEdits", "bypassPermissions", "plan", "auto"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export interface ServerCommand {
  command: string;
  args: string[];
}

/** How to start the server: `python -m codev_ls` when a Python is configured, else the executable. */
export function serverCommand(serverPath: string | undefined, pythonPath: string | undefined): ServerCommand {
  const python = (pythonPath ?? "").trim();
  if (python) {
    return { command: python, args: ["-m", "codev_ls"] };
  }
  const server = (serverPath ?? "").trim() || "codev-ls";
  return { command: server, args: [] };
}

/**
 * The server's environment: the editor's, then `codev.env` (non-secret settings), then the secrets.
 * A secret-looking key in `codev.env` is refused: keys belong in SecretStorage, never settings.json.
 */
export function serverEnv(
  base: Record<string, string | undefined>,
  settingsEnv: Record<string, unknown> | undefined,
  secrets: Record<string, string | undefined>,
): { env: Record<string, string>; warnings: string[] } {
  const env: Record<string, string> = {};
  const warnings: string[] = [];
  for (const [k, v] of Object.entries(base)) {
    if (typeof v === "string") env[k] = v;
  }
  for (const [k, v] of Object.entries(settingsEnv ?? {})) {
    if (looksSecret(k)) {
      warnings.push(
        `codev.env.${k} looks like a secret and was ignored: store it with "Codev: Set API Key…" (it takes any name) instead.`,
      );
      continue;
    }
    if (typeof v === "string") env[k] = v;
    else if (typeof v === "number" || typeof v === "boolean") env[k] = String(v);
  }
  for (const [k, v] of Object.entries(secrets)) {
    if (v) env[k] = v;
  }
  return { env, warnings };
}

/** Parse the tool input a user typed; an error message written for them when it is not a JSON object. */
export function parseToolInput(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (e) {
    return { ok: false, error: `The input is not valid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: "The input must be a JSON object, e.g. {\"file_path\": \"/abs/path\"}." };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

export interface ContentBlock {
  type: string;
  text?: string;
  [k: string]: unknown;
}

export interface ToolOutcome {
  toolUseId: string;
  status: "success" | "error" | "rejected" | "interrupted";
  content: string | ContentBlock[];
  decisionSource?: string;
  persistedPath?: string;
  /** Tool-specific facts, e.g. `{partial, hunksApplied, hunksRejected}` of an edit. */
  meta?: Record<string, unknown>;
}

/** An outcome's content as text (images as placeholders). */
export function outcomeText(outcome: ToolOutcome): string {
  if (typeof outcome.content === "string") return outcome.content;
  return outcome.content.map((b) => (b.type === "text" ? b.text ?? "" : `[${b.type}]`)).join("\n");
}

/** One line for a notification: "Read: success (config)". */
export function outcomeSummary(name: string, outcome: ToolOutcome): string {
  const source = outcome.decisionSource ? ` (${outcome.decisionSource})` : "";
  return `${name}: ${outcome.status}${source}`;
}

/** The status-bar text: the mode, and the running tool when there is one. */
export function statusText(mode: string, running: string[]): string {
  const base = `$(shield) Codev: ${mode}`;
  if (running.length === 0) return base;
  const more = running.length > 1 ? ` +${running.length - 1}` : "";
  return `${base} $(sync~spin) ${running[0]}${more}`;
}

/** Titles of Codev's permission prompt actions, in the order PROTOCOL.md lists them. */
export function isPermissionAction(title: string): boolean {
  return /^(Allow once|Allow for this session|Always allow|Reject)/.test(title);
}

/** A `window/showMessageRequest` action (LSP `MessageActionItem`). */
export interface MessageAction {
  title: string;
  [k: string]: unknown;
}

/** Short button labels for Codev's permission actions, by the title prefix PROTOCOL.md fixes. */
const SHORT_LABELS: readonly (readonly [string, string])[] = [
  ["Allow once", "Allow once"],
  ["Allow for this session", "This session"],
  ["Always allow", "Always"],
  ["Reject", "Reject"],
];

/** A permission prompt as VS Code shows it: short buttons, the rules they keep in the message. */
export interface ShortPrompt {
  message: string;
  labels: string[];
  /** The server's action for each label, in order. */
  actions: MessageAction[];
}

/**
 * VS Code's notification buttons are short by nature ("Always allow: Edit(src/**)" is cut to
 * "Al…"): for a Codev permission prompt, the buttons get short labels and the rules the long
 * titles named move into the message. Null for any other question (it is shown as it came).
 */
export function shortPermissionPrompt(message: string, actions: readonly MessageAction[] | undefined): ShortPrompt | null {
  if (!actions || actions.length === 0) return null;
  const labels: string[] = [];
  const rules: string[] = [];
  for (const action of actions) {
    const entry = SHORT_LABELS.find(([prefix]) => action.title.startsWith(prefix));
    if (!entry) return null;
    const [prefix, label] = entry;
    const rest = action.title.slice(prefix.length);
    if (rest !== "" && !rest.startsWith(":")) return null; // e.g. "Allow onceX": not one of ours
    if (labels.includes(label)) return null;
    labels.push(label);
    const rule = rest.replace(/^:\s*/, "").trim();
    if (rule) rules.push(`${label}: ${rule}`);
  }
  if (!labels.includes("Reject")) return null;
  const note = rules.length ? `\n\n(${rules.join(" · ")})` : "";
  return { message: message + note, labels, actions: [...actions] };
}

/** The server's action for the button the user pressed (null: dismissed, which is a rejection). */
export function originalAction(prompt: ShortPrompt, label: string | undefined): MessageAction | null {
  if (label === undefined) return null;
  const i = prompt.labels.indexOf(label);
  return i >= 0 ? prompt.actions[i] : null;
}

/** What an outcome adds to its one-line summary: which changes of a partly accepted edit landed. */
export function outcomeDetail(outcome: ToolOutcome): string {
  const meta = outcome.meta ?? {};
  const applied = Array.isArray(meta.hunksApplied) ? (meta.hunksApplied as number[]) : [];
  const refused = Array.isArray(meta.hunksRejected) ? (meta.hunksRejected as number[]) : [];
  if (!meta.partial || applied.length + refused.length === 0) return "";
  const list = (xs: number[]) => xs.map((i) => i + 1).join(", ");
  const total = applied.length + refused.length;
  return `change ${list(applied)} of ${total} applied, ${list(refused) || "none"} refused`;
}

/** The `codev/explainPermission` answer as text for a person (the server sends data). */
export function explanationText(res: Record<string, unknown>): string {
  const lines = [`${res.tool ?? "?"} ${JSON.stringify(res.input ?? {})}`];
  if (typeof res.error === "string") {
    lines.push(`Cannot explain: ${res.error}`);
    return lines.join("\n");
  }
  const source = res.source ? `, source ${res.source}` : "";
  const rule = res.rule ? `, rule ${res.rule}` : "";
  lines.push(`Decision: ${res.decision} (mode ${res.mode}${source}${rule})`);
  if (res.reason) lines.push(`Why: ${res.reason}`);
  const offer = Array.isArray(res.wouldOffer) ? (res.wouldOffer as string[]) : [];
  if (offer.length) lines.push(`"Always allow" would save: ${offer.join(", ")}`);
  if (Array.isArray(res.trace) && res.trace.length) {
    lines.push("Steps:", ...(res.trace as string[]).map((t) => `  - ${t}`));
  }
  if (res.note) lines.push(`Note: ${res.note}`);
  return lines.join("\n");
}

const ESC: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESC[c]);
}

/**
 * A small, safe Markdown renderer for the chat view: fenced code, headings, lists, bold, italics,
 * inline code and links (http/https only). Everything else is escaped text.
 */
export function renderMarkdown(md: string): string {
  const out: string[] = [];
  const lines = md.split("\n");
  let inCode = false;
  let code: string[] = [];
  let list = false;
  const closeList = () => {
    if (list) {
      out.push("</ul>");
      list = false;
    }
  };
  for (const line of lines) {
    if (line.startsWith("```")) {
      if (inCode) {
        out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
        code = [];
        inCode = false;
      } else {
        closeList();
        inCode = true;
      }
      continue;
    }
    if (inCode) {
      code.push(line);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      closeList();
      const level = heading[1].length;
      out.push(`<h${level}>${inline(heading[2])}</h${level}>`);
      continue;
    }
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    if (item) {
      if (!list) {
        out.push("<ul>");
        list = true;
      }
      out.push(`<li>${inline(item[1])}</li>`);
      continue;
    }
    closeList();
    out.push(line.trim() === "" ? "" : `<p>${inline(line)}</p>`);
  }
  if (inCode) out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
  closeList();
  return out.filter((l) => l !== "").join("\n");
}

function inline(text: string): string {
  let html = escapeHtml(text);
  html = html.replace(/`([^`]+)`/g, "<code>$1</code>");
  html = html.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  html = html.replace(/(^|[^*])\*([^*]+)\*/g, "$1<em>$2</em>");
  html = html.replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g, '<a href="$2">$1</a>');
  return html;
}

/** One server's line in `codev/mcpStatus` (the fields the extension uses). */
export interface McpServerStatus {
  name: string;
  state: string;
  origin?: string;
  reason?: string;
  target?: string;
}

/** Quick-pick items for "Codev: Approve MCP Server…": the project servers held back, waiting first. */
export function heldMcpServers(servers: McpServerStatus[]): { label: string; description: string; detail: string }[] {
  const order = (s: McpServerStatus) => (s.state === "needs-approval" ? 0 : 1);
  return servers
    .filter((s) => s.origin === "project" && (s.state === "needs-approval" || s.state === "disabled"))
    .sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name))
    .map((s) => ({
      label: s.name,
      description: s.state === "disabled" ? "rejected" : "waiting for approval",
      detail: [s.target, s.reason].filter(Boolean).join(" — "),
    }));
}
