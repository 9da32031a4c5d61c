// Drives a real VS Code (code-server) in headless Chromium with Playwright.
//
//   node drive.js SCENARIO URL WORKSPACE SCREENSHOT_DIR
//
// Scenarios:
//   bash-permission  run "Codev: Run Tool…" → Bash writing a file → the server asks → click "Allow once"
//   edit-preview     run "Codev: Run Tool…" → Edit of an open file → the refactor preview shows the
//                    diff → click "Apply" (the preview is the approval)
// Prints one JSON line with what happened; the Python test checks the disk.
const { chromium } = require("playwright-core");
const fs = require("node:fs");
const path = require("node:path");

const [scenario, url, workspace, shots] = process.argv.slice(2);

function log(...a) {
  process.stderr.write(a.join(" ") + "\n");
}

async function waitFor(fn, timeout = 30000, what = "condition") {
  const t0 = Date.now();
  while (Date.now() - t0 < timeout) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 15000 });
  await input.fill(">" + title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press("Enter");
}

async function pickAndType(page, label, text) {
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 30000 });
  await input.fill(label);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first().waitFor({ timeout: 30000 });
  await page.keyboard.press("Enter");
  // The input box for the JSON comes next.
  await page.waitForTimeout(500);
  await input.waitFor({ state: "visible", timeout: 15000 });
  await input.fill(text);
  await page.keyboard.press("Enter");
}

async function main() {
  const profile = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "codev-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    viewport: { width: 1400, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = context.pages()[0] || (await context.newPage());
  const result = { scenario, steps: [] };
  try {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60000 });
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    result.steps.push("workbench");
    // The status bar item appears once the extension has started the server.
    await page.locator(".statusbar-item", { hasText: "Codev:" }).first().waitFor({ timeout: 60000 });
    result.steps.push("extension-active");

    if (scenario === "bash-permission") {
      const target = path.join(workspace, "from-vscode.txt");
      await runCommand(page, "Codev: Run Tool…");
      await pickAndType(page, "Bash", JSON.stringify({ command: `echo written-by-codev > ${target}` }));
      const allow = page.locator(".notifications-toasts .monaco-button", { hasText: "Allow once" });
      await allow.first().waitFor({ timeout: 60000 });
      result.steps.push("prompt-shown");
      const toast = page.locator(".notifications-toasts .notification-toast").first();
      result.prompt = (await toast.innerText()).slice(0, 2000);
      await page.waitForTimeout(800); // let the toast finish fading in
      await page.screenshot({ path: path.join(shots, "vscode-permission-prompt.png") });
      await allow.first().click();
      result.steps.push("allowed");
      await waitFor(() => fs.existsSync(target), 30000, "the file on disk");
      result.steps.push("file-written");
    } else if (scenario === "edit-preview") {
      const file = path.join(workspace, "greeting.py");
      await runCommand(page, "Codev: Run Tool…");
      await pickAndType(page, "Read", JSON.stringify({ file_path: file }));
      await page.waitForTimeout(1500);
      await runCommand(page, "Codev: Run Tool…");
      await pickAndType(page, "Edit", JSON.stringify({ file_path: file, old_string: "hello", new_string: "hello from codev" }));
      // VS Code shows the refactor preview for edits that need confirmation.
      const apply = page.locator(".monaco-button", { hasText: /^Apply$/ });
      await apply.first().waitFor({ timeout: 60000 });
      result.steps.push("preview-shown");
      // Changes that need confirmation start unticked: the user ticks the hunks to accept
      // (here the file's box, which ticks all of them), then applies.
      const boxes = page.locator("input.edit-checkbox");
      await boxes.first().waitFor({ timeout: 15000 });
      await boxes.first().check();
      for (let i = 0; i < (await boxes.count()); i++) {
        if (!(await boxes.nth(i).isChecked())) await boxes.nth(i).check();
      }
      result.hunkBoxes = (await boxes.count()) - 1;
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(shots, "vscode-edit-diff.png") });
      await apply.first().click();
      result.steps.push("applied");
      await waitFor(() => fs.readFileSync(file, "utf8").includes("hello from codev"), 30000, "the edit on disk");
      result.steps.push("file-saved");
    } else {
      throw new Error(`unknown scenario ${scenario}`);
    }
    result.ok = true;
  } catch (e) {
    result.ok = false;
    result.error = String(e && e.stack ? e.stack : e);
    try {
      await page.screenshot({ path: path.join(shots, `vscode-${scenario}-failure.png`) });
    } catch {}
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(result) + "\n");
  process.exit(result.ok ? 0 : 1);
}

main();
