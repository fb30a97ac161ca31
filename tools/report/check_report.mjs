// Opens a `zkpipe report` page in the system's Chromium (playwright-core drives it; no browser is
// downloaded) and checks it as a reader would see it: every expected chart is on the page and
// drawn (its SVG has a size and holds the shapes of its series), no console error and no page
// error, hovering the first span of a timeline shows its tooltip, and zooming one chart over time
// zooms the others. Saves a screenshot of the whole page and, with --charts DIR, one per chart.
//
//   node check_report.mjs REPORT.html SCREENSHOT.png --expect timeline-0,h2d,... [--charts DIR]
//
// Exit status: 0 passed, 1 failed, 77 (CTest's skip) when chromium is not installed; set
// CHROMIUM to use another binary than /usr/bin/chromium.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [page_file, screenshot, ...rest] = process.argv.slice(2);
const option = name => { const at = rest.indexOf(name); return at >= 0 ? rest[at + 1] : undefined; };
if (!page_file || !screenshot || !option('--expect')) {
  console.error('usage: node check_report.mjs REPORT.html SCREENSHOT.png --expect ID,ID,... [--charts DIR]');
  process.exit(1);
}
const expected = option('--expect').split(',');
const chartsFolder = option('--charts');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(executablePath)) {
  console.log(`SKIP: ${executablePath} not found (tools/install-deps.sh installs Debian's chromium): report not opened`);
  process.exit(77);
}
let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (error) {
  console.error(`check_report: playwright-core is missing (${error.message}): run tools/install-deps.sh (npm install in tools/report)`);
  process.exit(1);
}

const failures = [];
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', message => { if (message.type() === 'error') failures.push(`console error: ${message.text()}`); });
  page.on('pageerror', error => failures.push(`page error: ${error.message}`));
  page.on('request', request => { if (!request.url().startsWith('file:')) failures.push(`network request: ${request.url()}`); });
  await page.goto(pathToFileURL(path.resolve(page_file)).href, { waitUntil: 'load' });

  const charts = await page.evaluate(() => [...document.querySelectorAll('div.chart')].map(box => {
    const svg = box.querySelector('svg');
    const size = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    const series = echarts.getInstanceByDom(box).getOption().series;
    // what must be drawn: a line per line series, a shape per other item (a bar of 0 draws none)
    const drawable = series.reduce((n, s) => n + (s.type === 'line' ? 1 : s.data.filter(d => (d.value ?? d) !== 0).length), 0);
    return { id: box.id, width: size.width, height: size.height, shapes: svg ? svg.querySelectorAll('path,rect').length : 0,
             points: series.reduce((n, s) => n + s.data.length, 0), drawable };
  }));
  for (const id of expected) {
    const chart = charts.find(c => c.id === id);
    if (!chart) { failures.push(`chart ${id} is not on the page`); continue; }
    if (chart.width < 100 || chart.height < 100) failures.push(`chart ${id} is ${chart.width} x ${chart.height} px`);
    if (chart.drawable === 0) failures.push(`chart ${id} has nothing to draw`);
    // a span, a copy, a cell, a bar or a line is at least one SVG shape (axes and legends add more)
    if (chart.shapes < chart.drawable) failures.push(`chart ${id} drew ${chart.shapes} shapes for ${chart.drawable} items`);
    console.log(`chart ${id}: ${Math.round(chart.width)} x ${Math.round(chart.height)} px, ${chart.points} data points, ` +
                `${chart.drawable} to draw, ${chart.shapes} SVG shapes`);
  }

  const tooltip = await page.evaluate(async () => {
    echarts.getInstanceByDom(document.getElementById('timeline-0')).dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: 0 });
    await new Promise(resolve => setTimeout(resolve, 300));
    const tip = [...document.querySelectorAll('#timeline-0 div')].find(div => div.textContent.includes('partition'));
    return tip ? tip.textContent : '';
  });
  if (!tooltip.includes('partition')) failures.push('hovering the first span of timeline-0 shows no tooltip');
  else console.log(`tooltip: ${tooltip}`);

  const zoomed = await page.evaluate(async () => {
    echarts.getInstanceByDom(document.getElementById('timeline-0')).dispatchAction({ type: 'dataZoom', start: 40, end: 60 });
    await new Promise(resolve => setTimeout(resolve, 300));
    const h2d = echarts.getInstanceByDom(document.getElementById('h2d')).getOption().dataZoom[0];
    const result = [h2d.start, h2d.end];
    echarts.getInstanceByDom(document.getElementById('timeline-0')).dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
    await new Promise(resolve => setTimeout(resolve, 300));
    return result;
  });
  if (zoomed[0] !== 40 || zoomed[1] !== 60) failures.push(`zooming timeline-0 to 40-60 % left h2d at ${zoomed}`);

  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);
  if (chartsFolder) {
    fs.mkdirSync(chartsFolder, { recursive: true });
    for (const id of expected) await page.locator(`#${id}`).screenshot({ path: path.join(chartsFolder, `${id}.png`) });
  }
} catch (error) {
  failures.push(`the page could not be checked: ${error.message.split('\n')[0]}`);
} finally {
  await browser.close();
}
failures.forEach(failure => console.error(`FAILED: ${failure}`));
console.log(failures.length ? `check_report: ${failures.length} failure(s)`
                            : `check_report: all ${expected.length} charts drawn, tooltip and zoom work, no console error`);
process.exit(failures.length ? 1 : 0);
