// Note: the server contributes the commands codev.listTools/runTool/permissionMode/chat itself
// (executeCommandProvider); the extension's own commands must not reuse those names.
// Codev for VS Code: starts Codev LS, shows its permission prompts and edit previews, a chat view,
// a status-bar item with the permission mode and the running tool.
import * as vscode from "vscode";
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditRequest,
  LanguageClient,
  LanguageClientOptions,
  MessageType,
  ServerOptions,
  ShowMessageRequest,
  ShowMessageRequestParams,
  TransportKind,
} from "vscode-languageclient/node";
import {
  McpServerStatus,
  MessageAction,
  PERMISSION_MODES,
  SECRET_NAMES_STATE,
  SecretPickItem,
  ToolOutcome,
  explanationText,
  heldMcpServers,
  originalAction,
  outcomeDetail,
  outcomeSummary,
  outcomeText,
  parseToolInput,
  readSecrets,
  recordSecretName,
  secretNames,
  secretPickItems,
  secretStorageKey,
  serverCommand,
  serverEnv,
  shortPermissionPrompt,
  statusText,
} from "./logic";
import { ChatViewProvider } from "./chat";

let client: LanguageClient | undefined;
// The client being started (at activation or by a restart): requests made meanwhile wait for it.
let starting: Promise<LanguageClient | undefined> | undefined;
let chat: ChatViewProvider | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let mode = "default";
const running = new Map<string | number, string>();

function config() {
  return vscode.workspace.getConfiguration("codev");
}

/** The custom secret names "Codev: Set API Key…" stored (the known ones are always read). */
function recordedSecretNames(context: vscode.ExtensionContext): string[] {
  return context.globalState.get<string[]>(SECRET_NAMES_STATE, []);
}

async function secrets(context: vscode.ExtensionContext): Promise<Record<string, string | undefined>> {
  return readSecrets(secretNames(recordedSecretNames(context)), (key) => context.secrets.get(key));
}

/**
 * `window/showMessageRequest` with short buttons for Codev's permission prompts (the rules they
 * keep go into the message), mapped back to the server's action; other questions as they came.
 * vscode-languageclient 9 has no middleware hook for this request, so the handler replaces the
 * library's (registered before start(), it is installed in place of the default one).
 */
async function showMessageRequest(params: ShowMessageRequestParams): Promise<MessageAction | null> {
  const show =
    params.type === MessageType.Error
      ? vscode.window.showErrorMessage
      : params.type === MessageType.Warning
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const prompt = shortPermissionPrompt(params.message, params.actions);
  if (!prompt) {
    const picked = await show(params.message, ...(params.actions ?? []));
    return picked ?? null;
  }
  const label = await show(prompt.message, ...prompt.labels);
  return originalAction(prompt, label);
}

function updateStatus() {
  status.text = statusText(mode, [...running.values()]);
  status.tooltip = "Codev permission mode (click to change)";
  status.show();
}

async function startClient(context: vscode.ExtensionContext): Promise<LanguageClient> {
  const cmd = serverCommand(config().get<string>("serverPath"), config().get<string>("pythonPath"));
  const { env, warnings } = serverEnv(process.env, config().get("env"), await secrets(context));
  for (const w of warnings) vscode.window.showWarningMessage(w);
  // An empty setting leaves the mode to the Codev settings files (permissions.defaultMode).
  const chosen = config().get<string>("permissionMode") || undefined;
  mode = chosen ?? "…";
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    transport: TransportKind.stdio,
    options: { env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    outputChannel: output,
    initializationOptions: chosen ? { permissionMode: chosen } : {},
    synchronize: { configurationSection: "codev" },
    middleware: {
      handleWorkDoneProgress: (token, params, next) => {
        if (params.kind === "begin") running.set(token, params.title);
        if (params.kind === "end") running.delete(token);
        updateStatus();
        next(token, params);
      },
    },
  };
  const c = new LanguageClient("codev", "Codev LS", serverOptions, clientOptions);
  // Handlers registered before start() take the place of the library's defaults from the first
  // message on (and every restarted client gets them again).
  // Accepted edits are saved: Codev's contract is that an approved edit is on disk when the tool ends.
  c.onRequest(ApplyWorkspaceEditRequest.type, (params: ApplyWorkspaceEditParams) => applyAndSave(c, params));
  c.onRequest(ShowMessageRequest.type, showMessageRequest);
  chat?.attach(c);
  await c.start();
  // The mode in force (the setting's, or the one the settings files chose).
  try {
    mode = ((await c.sendRequest("codev/permissionMode", {})) as { mode: string }).mode;
  } catch {
    // An older server: keep what the setting said.
  }
  return c;
}

async function applyAndSave(c: LanguageClient, params: ApplyWorkspaceEditParams) {
  const edit = await c.protocol2CodeConverter.asWorkspaceEdit(params.edit);
  const uris = edit.entries().map(([uri]) => uri.toString());
  const dirtyBefore = new Set(
    vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.toString()),
  );
  let applied = false;
  try {
    applied = await vscode.workspace.applyEdit(edit);
  } catch (e) {
    return { applied: false, failureReason: String(e) };
  }
  if (applied) {
    for (const doc of vscode.workspace.textDocuments) {
      const key = doc.uri.toString();
      if (uris.includes(key) && doc.isDirty && !dirtyBefore.has(key)) await doc.save();
    }
  }
  return { applied };
}

async function ensureClient(): Promise<LanguageClient> {
  while (!client && starting) await starting;
  if (!client) throw new Error("Codev LS is not running (Codev: Restart Server).");
  return client;
}

/**
 * Start a client once `before` is done (a restart's stop of the old one), showing the error when
 * it cannot start. Requests made meanwhile wait for it (ensureClient).
 */
function launch(context: vscode.ExtensionContext, before?: Promise<unknown>): Promise<LanguageClient | undefined> {
  const started = (async () => {
    if (before) await before;
    try {
      client = await startClient(context);
      return client;
    } catch (e) {
      vscode.window.showErrorMessage(`Codev LS could not start: ${e}. Check codev.serverPath / codev.pythonPath.`);
      return undefined;
    }
  })();
  starting = started;
  void started.finally(() => {
    if (starting === started) starting = undefined;
    updateStatus();
  });
  return started;
}

async function runTool() {
  const c = await ensureClient();
  const list = (await c.sendRequest("codev/listTools", {})) as { tools: { name: string; description: string }[] };
  const pick = await vscode.window.showQuickPick(
    list.tools.map((t) => ({ label: t.name, detail: t.description })),
    { placeHolder: "Codev tool to run" },
  );
  if (!pick) return;
  const text = await vscode.window.showInputBox({ prompt: `${pick.label} input (a JSON object)`, value: "{}" });
  if (text === undefined) return;
  const parsed = parseToolInput(text);
  if (!parsed.ok) {
    vscode.window.showErrorMessage(parsed.error);
    return;
  }
  const outcome = (await c.sendRequest("codev/runTool", { name: pick.label, input: parsed.value })) as ToolOutcome;
  output.appendLine(`── ${outcomeSummary(pick.label, outcome)}`);
  output.appendLine(outcomeText(outcome));
  const detail = outcomeDetail(outcome);
  const summary = outcomeSummary(pick.label, outcome) + (detail ? ` — ${detail}` : "");
  if (outcome.status === "success") vscode.window.showInformationMessage(summary, "Show Output").then((a) => a && output.show());
  else vscode.window.showWarningMessage(`${summary}: ${outcomeText(outcome).slice(0, 300)}`);
}

async function setPermissionMode() {
  const c = await ensureClient();
  const pick = await vscode.window.showQuickPick([...PERMISSION_MODES], { placeHolder: `Permission mode (now ${mode})` });
  if (!pick) return;
  const res = (await c.sendRequest("codev/permissionMode", { mode: pick })) as { mode: string };
  mode = res.mode;
  updateStatus();
}

async function explainPermission() {
  const c = await ensureClient();
  const name = await vscode.window.showInputBox({ prompt: "Tool name (e.g. Bash)" });
  if (!name) return;
  const text = await vscode.window.showInputBox({ prompt: `${name} input (a JSON object)`, value: "{}" });
  if (text === undefined) return;
  const parsed = parseToolInput(text);
  if (!parsed.ok) {
    vscode.window.showErrorMessage(parsed.error);
    return;
  }
  const res = (await c.sendRequest("codev/explainPermission", { name, input: parsed.value })) as Record<string, unknown>;
  const explanation = explanationText(res);
  output.appendLine(`── explain ${name}`);
  output.appendLine(explanation);
  vscode.window.showInformationMessage(explanation.slice(0, 500), "Show Output").then((a) => a && output.show());
}

async function approveMcpServer() {
  const c = await ensureClient();
  const status = (await c.sendRequest("codev/mcpStatus", {})) as { servers: McpServerStatus[] };
  const items = heldMcpServers(status.servers);
  if (items.length === 0) {
    vscode.window.showInformationMessage("No project MCP server is waiting for approval or rejected.");
    return;
  }
  const pick = await vscode.window.showQuickPick(items, { placeHolder: "Ask again about which MCP server?" });
  if (!pick) return;
  // The server asks its own question (a notification with Allow once / Always allow / Reject).
  const res = (await c.sendRequest("codev/mcpApprove", { name: pick.label })) as { message: string };
  output.appendLine(`── MCP server ${pick.label}: ${res.message}`);
  vscode.window.showInformationMessage(res.message);
}

/** Pick a secret's name: one of the known keys, a recorded one, or any name typed in the box. */
async function pickSecretName(context: vscode.ExtensionContext): Promise<string | undefined> {
  const recorded = recordedSecretNames(context);
  const stored = new Set<string>();
  for (const name of secretNames(recorded)) {
    if (await context.secrets.get(secretStorageKey(name))) stored.add(name);
  }
  const qp = vscode.window.createQuickPick<SecretPickItem & vscode.QuickPickItem>();
  qp.placeholder = "Which key? Pick one, or type any variable name (e.g. DEEPSEEK_API_KEY)";
  qp.items = secretPickItems("", recorded, stored);
  qp.onDidChangeValue((typed) => (qp.items = secretPickItems(typed, recorded, stored)));
  const name = await new Promise<string | undefined>((resolve) => {
    qp.onDidAccept(() => {
      const item = qp.selectedItems[0];
      if (item && item.name === "") {
        vscode.window.showErrorMessage(`"${item.label}" is not a valid environment variable name (letters, digits and _).`);
        return;
      }
      resolve(item?.name);
      qp.hide();
    });
    qp.onDidHide(() => resolve(undefined));
    qp.show();
  });
  qp.dispose();
  return name;
}

async function setApiKey(context: vscode.ExtensionContext) {
  const key = await pickSecretName(context);
  if (!key) return;
  const value = await vscode.window.showInputBox({
    prompt: `${key} (kept in VS Code's secret storage and given to the server's environment; empty deletes it)`,
    password: true,
  });
  if (value === undefined) return;
  if (value === "") await context.secrets.delete(secretStorageKey(key));
  else await context.secrets.store(secretStorageKey(key), value);
  await context.globalState.update(SECRET_NAMES_STATE, recordSecretName(recordedSecretNames(context), key, value !== ""));
  await restart(context);
}

async function restart(context: vscode.ExtensionContext) {
  if (starting) await starting;
  status.text = "$(sync~spin) Codev: restarting…";
  const old = client;
  client = undefined;
  running.clear();
  chat?.reset("server restarted");
  await launch(context, old?.stop().catch(() => undefined));
}

export async function activate(context: vscode.ExtensionContext) {
  output = vscode.window.createOutputChannel("Codev");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  status.command = "codev.setPermissionMode";
  context.subscriptions.push(output, status);
  const view = new ChatViewProvider(context.extensionUri, async () => ensureClient());
  chat = view;
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider("codev.chat", view),
    vscode.commands.registerCommand("codev.ask", () => view.ask()),
    vscode.commands.registerCommand("codev.pickTool", runTool),
    vscode.commands.registerCommand("codev.setPermissionMode", setPermissionMode),
    vscode.commands.registerCommand("codev.explainPermission", explainPermission),
    vscode.commands.registerCommand("codev.approveMcpServer", approveMcpServer),
    vscode.commands.registerCommand("codev.restartServer", () => restart(context)),
    vscode.commands.registerCommand("codev.setApiKey", () => setApiKey(context)),
    vscode.commands.registerCommand("codev.cancel", async () => (await ensureClient()).sendRequest("codev/cancel", {})),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("codev.permissionMode")) {
        // The server takes the new value from the codev section it is sent; an empty one changes nothing.
        mode = config().get<string>("permissionMode") || mode;
        updateStatus();
      }
      if (e.affectsConfiguration("codev.serverPath") || e.affectsConfiguration("codev.pythonPath") || e.affectsConfiguration("codev.env")) {
        restart(context);
      }
    }),
  );
  await launch(context);
}

export async function deactivate() {
  if (client) await client.stop();
}
