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
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import {
  McpServerStatus,
  PERMISSION_MODES,
  SECRET_KEYS,
  ToolOutcome,
  heldMcpServers,
  outcomeSummary,
  outcomeText,
  parseToolInput,
  serverCommand,
  serverEnv,
  statusText,
} from "./logic";
import { ChatViewProvider } from "./chat";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let mode = "default";
const running = new Map<string | number, string>();

function config() {
  return vscode.workspace.getConfiguration("codev");
}

async function secrets(context: vscode.ExtensionContext): Promise<Record<string, string | undefined>> {
  const values: Record<string, string | undefined> = {};
  for (const key of SECRET_KEYS) values[key] = await context.secrets.get(`codev.${key}`);
  return values;
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
  mode = config().get<string>("permissionMode") ?? "default";
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    transport: TransportKind.stdio,
    options: { env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    outputChannel: output,
    initializationOptions: { permissionMode: mode },
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
  await c.start();
  // Accepted edits are saved: Codev's contract is that an approved edit is on disk when the tool ends.
  c.onRequest(ApplyWorkspaceEditRequest.type, (params: ApplyWorkspaceEditParams) => applyAndSave(c, params));
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
  if (!client) throw new Error("Codev LS is not running (Codev: Restart Server).");
  return client;
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
  const summary = outcomeSummary(pick.label, outcome);
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
  const explanation = String(res.text ?? res.explanation ?? JSON.stringify(res, null, 2));
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

async function setApiKey(context: vscode.ExtensionContext) {
  const key = await vscode.window.showQuickPick([...SECRET_KEYS], { placeHolder: "Which key?" });
  if (!key) return;
  const value = await vscode.window.showInputBox({ prompt: `${key} (stored in VS Code's secret storage)`, password: true });
  if (value === undefined) return;
  if (value === "") await context.secrets.delete(`codev.${key}`);
  else await context.secrets.store(`codev.${key}`, value);
  await restart(context);
}

async function restart(context: vscode.ExtensionContext) {
  if (client) {
    await client.stop().catch(() => undefined);
    client = undefined;
  }
  running.clear();
  client = await startClient(context);
  updateStatus();
}

export async function activate(context: vscode.ExtensionContext) {
  output = vscode.window.createOutputChannel("Codev");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  status.command = "codev.setPermissionMode";
  context.subscriptions.push(output, status);
  const chat = new ChatViewProvider(context.extensionUri, async () => ensureClient());
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider("codev.chat", chat),
    vscode.commands.registerCommand("codev.ask", () => chat.ask()),
    vscode.commands.registerCommand("codev.pickTool", runTool),
    vscode.commands.registerCommand("codev.setPermissionMode", setPermissionMode),
    vscode.commands.registerCommand("codev.explainPermission", explainPermission),
    vscode.commands.registerCommand("codev.approveMcpServer", approveMcpServer),
    vscode.commands.registerCommand("codev.restartServer", () => restart(context)),
    vscode.commands.registerCommand("codev.setApiKey", () => setApiKey(context)),
    vscode.commands.registerCommand("codev.cancel", async () => (await ensureClient()).sendRequest("codev/cancel", {})),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("codev.permissionMode")) {
        mode = config().get<string>("permissionMode") ?? mode;
        updateStatus();
      }
      if (e.affectsConfiguration("codev.serverPath") || e.affectsConfiguration("codev.pythonPath") || e.affectsConfiguration("codev.env")) {
        restart(context);
      }
    }),
  );
  try {
    client = await startClient(context);
    chat.attach(client);
  } catch (e) {
    vscode.window.showErrorMessage(`Codev LS could not start: ${e}. Check codev.serverPath / codev.pythonPath.`);
  }
  updateStatus();
}

export async function deactivate() {
  if (client) await client.stop();
}
