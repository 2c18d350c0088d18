// Usage: node browser-check.mjs BASE_URL PASTE_TEXT EXPECTED_PATH WORD
// Drives Debian Chromium through the search page the way a reader does and prints JSON:
//  paste: where pasting PASTE_TEXT into the home page's box lands (expected: EXPECTED_PATH);
//  fulltext: the result links Pagefind shows for WORD;
//  copy: what the copy button on the first command block put on the clipboard;
//  noJs: whether the search page without JavaScript still links every error page.
import puppeteer from "puppeteer-core";
import { CHROME_FLAGS, CHROME_PATH } from "./chrome-flags.mjs";

const [base, paste, expected, word] = process.argv.slice(2);
const browser = await puppeteer.launch({ executablePath: CHROME_PATH, args: CHROME_FLAGS, headless: true });
const report = {};
try {
  const page = await browser.newPage();
  await page.goto(base + "/", { waitUntil: "load" });
  await page.type("#paste", paste);
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("form.paste button[type=submit]")]);
  if (new URL(page.url()).pathname !== expected) {
    await page.waitForNavigation({ waitUntil: "load", timeout: 10000 }).catch(() => {});
  }
  report.paste = new URL(page.url()).pathname;
  report.pasteTitle = await page.$eval("h1", (h) => h.textContent);

  await page.goto(base + "/search/?q=" + encodeURIComponent(word), { waitUntil: "load" });
  await page.waitForSelector(".pagefind-ui__result-link", { timeout: 15000 }).catch(() => {});
  report.fulltext = await page.$$eval(".pagefind-ui__result-link", (links) => links.map((a) => new URL(a.href).pathname));
  report.noMatchNote = await page.$eval("#matches", (m) => m.textContent.trim());

  const context = browser.defaultBrowserContext();
  await context.overridePermissions(base, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  await page.goto(base + expected, { waitUntil: "load" });
  const copyButton = await page.$(".cmd pre button.copy");
  if (copyButton) {
    const expectedText = await page.$eval(".cmd pre code", (c) => c.innerText);
    await copyButton.click();
    await page.waitForFunction(() => document.querySelector(".cmd pre button.copy").textContent === "Copied", { timeout: 5000 }).catch(() => {});
    const copied = await page.evaluate(() => navigator.clipboard.readText()).catch((e) => "error: " + e.message);
    report.copy = { ok: copied === expectedText, label: await page.$eval(".cmd pre button.copy", (b) => b.textContent) };
  } else {
    report.copy = { ok: false, label: "no copy button" };
  }

  const plain = await browser.newPage();
  await plain.setJavaScriptEnabled(false);
  await plain.goto(base + "/search/?q=" + encodeURIComponent(paste), { waitUntil: "load" });
  report.noJs = { path: new URL(plain.url()).pathname, links: await plain.$$eval("main a", (links) => links.map((a) => new URL(a.href).pathname)) };
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
