// Starts `claimpool demo` on a free port with its own database, for one test file, and logs
// users in on it.
import { expect, Page } from "@playwright/test";
import { spawn, execFileSync, ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import AxeBuilder from "@axe-core/playwright";

export interface Server {
  url: string;
  /// The demo's database (a SQLite file or a PostgreSQL URL), for `claimpool --db` calls beside
  /// the running server.
  db: string;
  /// The binary serving it.
  bin: string;
  stop: () => void;
}

/// With CLAIMPOOL_E2E_POSTGRES (a PostgreSQL server's URL without a database, e.g.
/// postgres://postgres@127.0.0.1:54329) every demo gets a new database of that server, made with
/// the createdb of CLAIMPOOL_E2E_PG_BIN (a directory; default: PATH), so the suite runs on
/// PostgreSQL; otherwise a SQLite file of its own.
const postgres = process.env.CLAIMPOOL_E2E_POSTGRES;
const pgBin = (program: string) => (process.env.CLAIMPOOL_E2E_PG_BIN ? join(process.env.CLAIMPOOL_E2E_PG_BIN, program) : program);

function newDatabase(): string {
  if (!postgres) return join(mkdtempSync(join(tmpdir(), "claimpool-e2e-")), "demo.db");
  const name = `e2e_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  execFileSync(pgBin("createdb"), [`--maintenance-db=${postgres}/postgres`, name]);
  return `${postgres}/${name}`;
}

/// The first column of the first row of `sql` on the demo's database, as text.
export function query(server: Server, sql: string): string {
  const out = postgres
    ? execFileSync(pgBin("psql"), ["-At", "-d", server.db, "-c", sql], { encoding: "utf8" })
    : execFileSync("sqlite3", [server.db, sql], { encoding: "utf8" });
  return out.trim();
}

/// What a test gives the demo's server besides its database: more `serve` options, a port of
/// its own choosing (0: any free one), more environment.
export interface DemoOptions {
  args?: string[];
  port?: number;
  env?: Record<string, string>;
}

/// A free port of the loopback interface, for a server that must know its own URL before it
/// starts (the OpenID provider's redirect URI names it).
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? ok(address.port) : fail(new Error("no port"))));
    });
  });
}

export async function startDemo(options: DemoOptions = {}): Promise<Server> {
  const bin = process.env.CLAIMPOOL_BIN ?? resolve(__dirname, "../../target/debug/claimpool");
  const db = newDatabase();
  const addr = `127.0.0.1:${options.port ?? 0}`;
  const extra = options.args ?? [];
  if (!postgres) {
    const { child, url } = await serving(bin, ["demo", "--db", db, "--addr", addr, ...extra], options.env);
    return { url, db, bin, stop: () => child.kill("SIGTERM") };
  }
  // The demo writes a SQLite file: made, then copied into the new PostgreSQL database, which a
  // server then serves with the demo's options.
  const file = join(mkdtempSync(join(tmpdir(), "claimpool-e2e-")), "demo.db");
  const seed = await serving(bin, ["demo", "--db", file, "--addr", "127.0.0.1:0"]);
  const ended = new Promise((ok) => seed.child.once("exit", ok));
  seed.child.kill("SIGTERM");
  await ended;
  execFileSync(bin, ["db", "copy", "--from", file, "--to", db], { stdio: ["ignore", "ignore", "pipe"] });
  const { child, url } = await serving(bin, ["serve", "--db", db, "--addr", addr, ...extra], options.env);
  return { url, db, bin, stop: () => child.kill("SIGTERM") };
}

/// Starts `bin args` and waits until it says where it serves.
async function serving(bin: string, args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child: ChildProcess = spawn(bin, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, RUST_LOG: "warn", ...env },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  const url = await new Promise<string>((ok, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`${args[0]} did not start in 180 s:\n${out}\n${stderr}`)), 180_000);
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/serving on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    child.on("exit", (code) => fail(new Error(`${args[0]} exited with ${code}:\n${out}\n${stderr}`)));
  });
  return { child, url };
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

// axe-core's violations on the page as it is now, one line each: the rule, its impact and the
// first elements it names.
export async function violations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}${v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ""}`,
  );
}
