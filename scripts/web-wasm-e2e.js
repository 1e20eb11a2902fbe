// Smoke test of the Fyne UI compiled to WebAssembly (/app/ of a headroom
// built with -tags webwasm): the module loads, Fyne draws its canvas, a
// click on the Plan tab changes the drawing, and a screenshot is saved.
//   node scripts/web-wasm-e2e.js BASE_URL CHROMIUM OUT.png
const { chromium } = require("playwright-core");

(async () => {
  const [base, exe, png] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    page.on("pageerror", e => errors.push(String(e)));
    await page.goto(base + "/app/", { timeout: 120000 });
    await page.waitForSelector("canvas", { timeout: 180000 });
    await page.waitForTimeout(5000);
    const before = await page.screenshot();
    await page.mouse.click(300, 21); // the Plan tab
    await page.waitForTimeout(5000);
    const after = await page.screenshot({ path: png });
    if (errors.length) throw new Error("page errors: " + errors.join("; ").slice(0, 300));
    if (before.equals(after)) throw new Error("a click on the Plan tab changed nothing");
    console.log(`web-e2e: wasm UI ok — Fyne canvas drawn, Plan tab opened (${png})`);
  } finally {
    await browser.close();
  }
})().catch(e => { console.error("web-e2e: FAIL (wasm):", e.message); process.exit(1); });
