// The extension's own logic, free of the `vscode` module so it can be unit-tested with node --test.

/** Keys that hold secrets: kept in VS Code's SecretStorage, handed to the server's environment only. */
export const SECRET_KEYS = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "TAVILY_API_KEY",
  "JINA_API_KEY",
  "AMAP_API_KEY",
  "GOOGLE_MAPS_API_KEY",
] as const;

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
    if ((SECRET_KEYS as readonly string[]).includes(k) || /(_KEY|_TOKEN|SECRET|PASSWORD)$/i.test(k)) {
      warnings.push(`codev.env.${k} looks like a secret and was ignored: use "Codev: Set API Key…" instead.`);
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
