// Opens a blkrr report's index.html from the file system in headless
// Chromium (puppeteer-core over the DevTools protocol, /usr/bin/chromium) and
// checks what a reader sees: no console error or warning, no uncaught
// exception, no failed request, every image decoded (naturalWidth > 0), every
// plot and table visible at a desktop and a phone width, no page wider than
// the phone's screen, every link to a file (the CSV behind a plot, its
// gnuplot script) pointing at a file that exists, and the page's order
// (fidelity tables first with --compare, then the summary, then the groups).
//
//   node report_page.js [--compare] [--screenshots DIR] REPORT_DIR...
// Exit 0 when every page passes, 1 with every problem listed otherwise.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const puppeteer = require('puppeteer-core');

const VIEWPORTS = [
  {name: 'desktop', width: 1280, height: 800},
  {name: 'phone', width: 390, height: 844},
];
const CHROMIUM = process.env.BLKRR_CHROMIUM || '/usr/bin/chromium';

function parseArgs(argv) {
  const o = {compare: false, screenshots: null, dirs: []};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--compare') o.compare = true;
    else if (argv[i] === '--screenshots') o.screenshots = argv[++i];
    else o.dirs.push(argv[i]);
  }
  if (!o.dirs.length) throw new Error('usage: report_page.js [--compare] [--screenshots DIR] REPORT_DIR...');
  return o;
}

// What the page shows, measured inside it.
function inspect() {
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    const st = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && st.display !== 'none' && st.visibility !== 'hidden' &&
        Number(st.opacity) > 0;
  };
  const imgs = [...document.images];
  const h2 = [...document.querySelectorAll('h2')].map((e) => e.id || e.textContent);
  return {
    images: imgs.length,
    brokenImages: imgs.filter((i) => !i.complete || i.naturalWidth === 0)
                      .map((i) => (i.alt || i.src).slice(0, 80)),
    hiddenImages: imgs.filter((i) => !visible(i)).map((i) => i.alt),
    tables: document.querySelectorAll('table').length,
    hiddenTables: [...document.querySelectorAll('table')].filter((t) => !visible(t))
                      .map((t) => (t.caption ? t.caption.textContent : '?')),
    figuresWithoutData: [...document.querySelectorAll('figure')]
                            .filter((f) => !f.querySelector('a[href$=".csv"]'))
                            .map((f) => f.id),
    links: [...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')),
    pageWidth: document.documentElement.scrollWidth,
    h2,
  };
}

async function checkPage(browser, dir, opts) {
  const problems = [];
  const file = path.resolve(dir, 'index.html');
  if (!fs.existsSync(file)) return [`${file}: missing`];
  const page = await browser.newPage();
  const cdp = await page.target().createCDPSession();
  await cdp.send('Log.enable');
  cdp.on('Log.entryAdded', ({entry}) => {
    if (entry.level === 'error' || entry.level === 'warning')
      problems.push(`log ${entry.level}: ${entry.text} ${entry.url || ''}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn' || m.type() === 'assert')
      problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url().slice(0, 100)} ` +
                                                `(${r.failure() && r.failure().errorText})`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  for (const vp of VIEWPORTS) {
    await page.setViewport({width: vp.width, height: vp.height});
    await page.goto('file://' + file, {waitUntil: 'load'});
    const r = await page.evaluate(inspect);
    const at = `${vp.name} ${vp.width}x${vp.height}`;
    if (r.images === 0) problems.push(`${at}: no plot`);
    if (r.tables === 0) problems.push(`${at}: no table`);
    for (const b of r.brokenImages) problems.push(`${at}: image not decoded: ${b}`);
    for (const b of r.hiddenImages) problems.push(`${at}: plot not visible: ${b}`);
    for (const t of r.hiddenTables) problems.push(`${at}: table not visible: ${t}`);
    for (const f of r.figuresWithoutData) problems.push(`${at}: ${f} links to no CSV`);
    if (r.pageWidth > vp.width) problems.push(`${at}: the page is ${r.pageWidth} px wide`);
    for (const l of r.links) {
      if (l.startsWith('#') || /^[a-z]+:/.test(l)) continue;
      if (!fs.existsSync(path.join(path.dirname(file), l))) problems.push(`${at}: link to missing ${l}`);
    }
    const order = r.h2.filter((x) => x !== 'method');
    const want = (opts.compare ? ['fidelity-tables', 'Summary'] : ['Summary'])
                     .concat(['how-much', 'how-fast', 'how-late', 'who'].filter((g) => order.includes(g)));
    if (JSON.stringify(order) !== JSON.stringify(want))
      problems.push(`${at}: headings ${JSON.stringify(order)}, expected ${JSON.stringify(want)}`);
    console.log(`report-page: ${dir} ${at}: ${r.images} plots, ${r.tables} tables, ` +
                `${r.links.length} links, headings ${order.join(' > ')}`);
    if (opts.screenshots) {
      const png = path.join(opts.screenshots, `report-${opts.compare ? 'compare' : 'trace'}-${vp.name}.png`);
      await page.screenshot({path: png});
      console.log(`report-page: screenshot ${png}`);
      if (vp.name === 'desktop' && !opts.compare && order.includes('how-fast')) {
        // A group's first plot down to its caption and links.
        await page.evaluate(() => {
          const f = document.querySelector('#how-fast').parentElement.querySelector('figure');
          window.scrollTo(0, f.getBoundingClientRect().bottom + window.scrollY - window.innerHeight + 16);
        });
        const fig = path.join(opts.screenshots, 'report-trace-plot.png');
        await page.screenshot({path: fig});
        console.log(`report-page: screenshot ${fig}`);
      }
    }
  }
  await page.close();
  return problems.map((p) => `${dir}: ${p}`);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'blkrr-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    userDataDir: profile,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           '--disable-dev-shm-usage'],
  });
  let problems = [];
  try {
    for (const d of opts.dirs) problems = problems.concat(await checkPage(browser, d, opts));
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
  }
  for (const p of problems) console.log(`report-page: FAILED: ${p}`);
  console.log(`report-page: ${opts.dirs.length} page(s), ${problems.length} problem(s)`);
  process.exit(problems.length ? 1 : 0);
}

main().catch((e) => {
  console.log(`report-page: FAILED: ${e.stack || e}`);
  process.exit(1);
});
