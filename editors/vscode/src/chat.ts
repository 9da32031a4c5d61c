// The chat view: a webview that streams codev/chatEvent (text as Markdown, tool uses and outcomes)
// with a Stop button that cancels the turn.
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { ChatEvent, ChatResult, ChatTranscript, ViewMessage } from "./chatModel";

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view?: vscode.WebviewView;
  private pending: ViewMessage[] = [];
  private readonly transcript = new ChatTranscript((m) => this.post(m));

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly getClient: () => Promise<LanguageClient>,
  ) {}

  /**
   * Listen to `client`'s chat events. Called for every client the extension starts (before
   * `start()`, so no event is missed) — a restarted server is a new client, and without this its
   * events would go nowhere.
   */
  attach(client: LanguageClient) {
    client.onNotification("codev/chatEvent", (ev: ChatEvent) => this.transcript.onEvent(ev));
  }

  /** The server is restarting: a running turn ends there (and Stop is disabled again). */
  reset(reason: string) {
    this.transcript.reset(reason);
  }

  resolveWebviewView(view: vscode.WebviewView) {
    this.view = view;
    view.webview.options = { enableScripts: true };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage(async (msg: { type: string; prompt?: string }) => {
      if (msg.type === "ask" && msg.prompt) await this.send(msg.prompt);
      if (msg.type === "stop") await this.stop();
    });
    for (const m of this.pending) view.webview.postMessage(m);
    this.pending = [];
  }

  async ask() {
    await vscode.commands.executeCommand("codev.chat.focus");
    // The view takes the focus when it first opens: the box must not close when that happens.
    const prompt = await vscode.window.showInputBox({ prompt: "Ask Codev", ignoreFocusOut: true });
    if (prompt) await this.send(prompt);
  }

  private post(message: ViewMessage) {
    if (this.view) this.view.webview.postMessage(message);
    else this.pending.push(message);
  }

  private async send(prompt: string) {
    const turn = this.transcript.begin(prompt);
    try {
      const client = await this.getClient();
      const params = this.transcript.sessionId ? { prompt, sessionId: this.transcript.sessionId } : { prompt };
      const res = (await client.sendRequest("codev/chat", params)) as ChatResult;
      this.transcript.finish(res, turn);
    } catch (e) {
      this.transcript.fail(String((e as Error).message ?? e), turn);
    }
  }

  private async stop() {
    const client = await this.getClient();
    const sid = this.transcript.sessionId;
    await client.sendRequest("codev/cancel", sid ? { sessionId: sid } : {});
  }

  private html(webview: vscode.Webview): string {
    const nonce = Math.random().toString(36).slice(2);
    return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}';">
<style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 8px; }
.turn { border-bottom: 1px solid var(--vscode-panel-border); padding: 4px 0; }
.user { font-weight: bold; }
.tool { font-size: 90%; opacity: .85; }
.success { color: var(--vscode-testing-iconPassed); } .error, .rejected, .interrupted { color: var(--vscode-errorForeground); }
pre { background: var(--vscode-textCodeBlock-background); padding: 4px; overflow-x: auto; }
#bar { position: sticky; bottom: 0; background: var(--vscode-sideBar-background); padding: 4px 0; display: flex; gap: 4px; }
#prompt { flex: 1; }
</style></head><body>
<div id="log"></div>
<div id="bar"><input id="prompt" placeholder="Ask Codev…"><button id="send">Send</button><button id="stop" disabled>Stop</button></div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const log = document.getElementById('log');
const prompt = document.getElementById('prompt');
const stop = document.getElementById('stop');
let current = null;
function add(cls, html) { const d = document.createElement('div'); d.className = cls; d.innerHTML = html; log.appendChild(d); d.scrollIntoView(); return d; }
function send() { const p = prompt.value.trim(); if (!p) return; vscode.postMessage({ type: 'ask', prompt: p }); prompt.value = ''; }
document.getElementById('send').onclick = send;
prompt.onkeydown = (e) => { if (e.key === 'Enter') send(); };
stop.onclick = () => vscode.postMessage({ type: 'stop' });
window.addEventListener('message', (e) => {
  const m = e.data;
  if (m.type === 'user') { add('turn user', m.html); current = null; stop.disabled = false; }
  else if (m.type === 'text') { if (!current) current = add('turn text', ''); current.innerHTML = m.html; }
  else if (m.type === 'toolUse') { add('tool', '▶ ' + m.html); current = null; }
  else if (m.type === 'toolResult') { add('tool ' + m.status, (m.status === 'success' ? '✓ ' : '✗ ') + m.status + ' ' + m.html); }
  else if (m.type === 'error') { add('error', m.html); }
  else if (m.type === 'done') { add('tool', '— ' + (m.stopReason || 'done')); current = null; stop.disabled = true; }
});
</script></body></html>`;
  }
}
