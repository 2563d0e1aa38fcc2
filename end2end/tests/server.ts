// Starts `claimpool demo` on a free port with its own database, for one test file, and logs
// users in on it.
import { expect, Page } from "@playwright/test";
import { spawn, ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export interface Server {
  url: string;
  /// The demo's database file, for `claimpool --db` calls beside the running server.
  db: string;
  /// The binary serving it.
  bin: string;
  stop: () => void;
}

export async function startDemo(): Promise<Server> {
  const bin = process.env.CLAIMPOOL_BIN ?? resolve(__dirname, "../../target/debug/claimpool");
  const db = join(mkdtempSync(join(tmpdir(), "claimpool-e2e-")), "demo.db");
  const child: ChildProcess = spawn(bin, ["demo", "--db", db, "--addr", "127.0.0.1:0"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, RUST_LOG: "warn" },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  const url = await new Promise<string>((ok, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`demo did not start in 180 s:\n${out}\n${stderr}`)), 180_000);
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/serving on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    child.on("exit", (code) => fail(new Error(`demo exited with ${code}:\n${out}\n${stderr}`)));
  });
  return { url, db, bin, stop: () => child.kill("SIGTERM") };
}

/// Waits until the page has hydrated (the app marks the body).
export async function hydrated(page: Page): Promise<void> {
  await expect(page.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
}

/// Logs `user` in on `page` through the login form, once the form has hydrated; resolves when
/// the page names the user.
export async function logInOn(page: Page, server: Server, user: string, password = `${user}-demo`): Promise<void> {
  await page.goto(`${server.url}/login`);
  await hydrated(page);
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(password);
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("current-user")).toHaveText(user);
}
