// The report page's script (report.hpp): draws the report's data (the #report-data JSON that
// report_data writes) with Apache ECharts, inlined before it, into #report. Every chart uses the
// SVG renderer; the charts over time share one time axis (seconds from each run's first span)
// and zoom together: wheel or drag on a chart, or the slider under it.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const main = document.getElementById('report');
  const runColours = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
  const timeGroup = 'zkpipe-time';
  const longestS = Math.max(...data.runs.map(run => run.makespan_s));

  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    Object.entries(attributes || {}).forEach(([key, value]) => node.setAttribute(key, value));
    children.forEach(child => node.append(child));
    return node;
  }
  function section(title, note) {
    main.append(element('h2', {}, title));
    if (note) main.append(element('p', { class: 'note' }, note));
  }
  function chart(id, height, option, group) {
    const box = element('div', { class: 'chart', id: id, style: `height:${height}px` });
    main.append(box);
    const instance = echarts.init(box, null, { renderer: 'svg' });
    instance.setOption(Object.assign({ animation: false }, option));
    if (group) instance.group = group;
    return instance;
  }
  function table(header, rows) {
    const head = element('tr', {}, ...header.map(cell => element('th', {}, cell)));
    return element('table', {}, head, ...rows.map(row => element('tr', {}, ...row.map(cell => element('td', {}, String(cell))))));
  }
  const seconds = value => `${value.toFixed(value < 1 ? 4 : 3)} s`;
  const runName = run => run.label;
  // A run's short name in legends: its source, numbered where two runs share one.
  const shortNames = data.runs.map((run, index) => data.runs.filter(other => other.source === run.source).length > 1
    ? `${run.source} ${data.runs.slice(0, index + 1).filter(other => other.source === run.source).length}` : run.source);
  // The shared time axis and its zoom: wheel/drag inside the plot, a slider below it.
  function timeAxis() {
    return { type: 'value', min: 0, max: longestS, name: 's', nameGap: 8, axisLabel: { formatter: value => `${+value.toFixed(3)}` } };
  }
  const timeZoom = [{ type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter' },
                    { type: 'slider', xAxisIndex: 0, filterMode: 'weakFilter', height: 18, bottom: 6 }];

  function summaries() {
    section('Summary');
    main.append(element('div', { class: 'runs' },
      ...data.runs.map(run => element('div', {}, element('b', {}, runName(run)), element('pre', {}, run.summary)))));
  }

  function comparison() {
    if (!data.comparison) return;
    section('Measured vs simulated', 'error: simulated - measured, in points for GPU utilization, in percent of the measurement otherwise');
    main.append(table(['metric', 'measured', 'simulated', 'error'], data.comparison.map(row => [
      row.metric, row.measured.toPrecision(5), row.simulated.toPrecision(5),
      `${row.error >= 0 ? '+' : ''}${row.error.toFixed(2)} ${row.unit === 'points' ? 'pt' : '%'}`])));
  }

  // One lane per resource; each span a bar from its start to its end in its phase's colour (a
  // series per phase: the legend names them and hides one on a click).
  function timeline(run, index) {
    const lanes = run.timeline.lanes;
    const renderSpan = (params, api) => {
      const lane = api.value(0);
      const start = api.coord([api.value(1), lane]), end = api.coord([api.value(2), lane]);
      const height = api.size([0, 1])[1] * 0.8;
      const shape = echarts.graphic.clipRectByRect(
        { x: start[0], y: start[1] - height / 2, width: Math.max(end[0] - start[0], 0.7), height: height },
        { x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height });
      return shape && { type: 'rect', shape: shape, style: api.style() };
    };
    const present = [...new Set(run.timeline.spans.map(span => span[3]))].sort((a, b) => a - b);
    const tooltip = params => {
      const [lane, start, end, phase, partition, attempt, bytes, items] = params.value;
      return `${lanes[lane]}: <b>${data.phases[phase].name}</b>, partition ${partition}` +
        (attempt >= 0 ? `, attempt ${attempt}` : '') + `<br>${seconds(start)} to ${seconds(end)} (${seconds(end - start)})` +
        (bytes ? `<br>${(bytes / 1e9).toFixed(3)} GB` : '') + (items ? `, ${items} items` : '');
    };
    chart(`timeline-${index}`, 96 + lanes.length * 16, {
      title: { text: runName(run), left: 4, top: 2, textStyle: { fontSize: 12 } },
      legend: { top: 24, itemWidth: 12, itemHeight: 10, textStyle: { fontSize: 11 } },
      tooltip: { trigger: 'item', formatter: tooltip },
      grid: { left: 90, right: 30, top: 54, bottom: 50 },
      xAxis: timeAxis(),
      yAxis: { type: 'category', data: lanes, inverse: true, axisLabel: { fontSize: 10 } },
      dataZoom: timeZoom,
      series: present.map(phase => ({
        name: data.phases[phase].name, type: 'custom', renderItem: renderSpan, encode: { x: [1, 2], y: 0 },
        itemStyle: { color: data.phases[phase].colour }, data: run.timeline.spans.filter(span => span[3] === phase) })),
    }, timeGroup);
  }

  // Every copy as a bar over its own interval at its own rate, bytes / duration.
  function copies() {
    section('Host-to-device GB/s, per copy at its rate',
      'each bar spans one copy, from its start to its end, at its bytes / duration; ' +
      'a/b/c copies apart from uploads without items (the witness, streamed key points). Peaks: ' +
      data.runs.map((run, index) => `${shortNames[index]} ${Math.max(0, ...run.copies.map(copy => copy[2])).toFixed(1)} GB/s`).join(', '));
    const renderCopy = (params, api) => {
      const start = api.coord([api.value(0), api.value(2)]), end = api.coord([api.value(1), 0]);
      const shape = echarts.graphic.clipRectByRect(
        { x: start[0], y: start[1], width: Math.max(end[0] - start[0], 1), height: end[1] - start[1] },
        { x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height });
      return shape && { type: 'rect', shape: shape, style: api.style() };
    };
    const kinds = ['a/b/c', 'witness or key points'];
    const series = [];
    data.runs.forEach((run, index) => kinds.forEach((kind, k) => series.push({
      name: `${shortNames[index]} ${kind}`, type: 'custom', renderItem: renderCopy, encode: { x: [0, 1], y: 2 },
      itemStyle: { color: runColours[index % runColours.length], opacity: k === 0 ? 0.75 : 0.35 },
      data: run.copies.filter(copy => copy[3] === k),
    })));
    chart('h2d', 340, {
      legend: { top: 0 },
      tooltip: { trigger: 'item', formatter: params => { const [start, end, gbps, , partition, bytes] = params.value;
        return `${params.seriesName}, partition ${partition}<br><b>${gbps.toFixed(2)} GB/s</b>: ${(bytes / 1e9).toFixed(3)} GB in ${seconds(end - start)}` +
          `<br>${seconds(start)} to ${seconds(end)}`; } },
      grid: { left: 60, right: 30, top: 40, bottom: 50 },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: 'GB/s', min: 0 },
      dataZoom: timeZoom,
      series: series,
    }, timeGroup);
  }

  function gpuBusy() {
    section('GPU busy over time', `the share of each bin (1/${data.gpu_busy_bins} of the run) in which one of the GPU's kernels ran`);
    const series = [];
    data.runs.forEach((run, index) => run.gpu_busy.gpus.forEach(gpu => series.push({
      name: `${shortNames[index]} ${gpu.gpu}`, type: 'line', step: 'middle', showSymbol: false,
      lineStyle: { width: 1.2 }, color: runColours[index % runColours.length],
      data: gpu.busy.map((busy, bin) => [(bin + 0.5) * run.gpu_busy.bin_s, 100 * busy]),
    })));
    chart('gpu-busy', 300, {
      legend: { top: 0 }, tooltip: { trigger: 'axis', valueFormatter: value => `${value.toFixed(1)} %` },
      grid: { left: 60, right: 30, top: 40, bottom: 50 },
      xAxis: timeAxis(), yAxis: { type: 'value', name: 'busy %', min: 0, max: 100 },
      dataZoom: timeZoom, series: series,
    }, timeGroup);
  }

  function phaseBreakdown() {
    section('Per-phase breakdown', 'seconds per partition: each phase\'s total over the partitions it ran for');
    const present = [...new Set(data.runs.flatMap(run => run.phases.map(phase => phase.phase)))].sort((a, b) => a - b);
    const series = data.runs.map((run, index) => ({
      name: shortNames[index], type: 'bar', color: runColours[index % runColours.length],
      data: present.map(phase => { const found = run.phases.find(p => p.phase === phase);
        return found ? { value: found.per_partition_s, spans: found.spans, total: found.total_s } : { value: 0, spans: 0, total: 0 }; }),
    }));
    chart('phases', 60 + present.length * 16 * Math.max(2, data.runs.length), {
      legend: { top: 0 },
      tooltip: { trigger: 'item', formatter: params => `${params.seriesName}<br><b>${present.map(p => data.phases[p].name)[params.dataIndex]}</b>: ` +
        `${seconds(params.value)} per partition, ${params.data.spans} spans, ${seconds(params.data.total)} in all` },
      grid: { left: 100, right: 40, top: 40, bottom: 30 },
      xAxis: { type: 'value', name: 's' },
      yAxis: { type: 'category', inverse: true, data: present.map(phase => data.phases[phase].name) },
      series: series,
    });
  }

  function waits() {
    section('Waits on the pinned pool and the memory budget',
      'partitions waiting over time; totals: ' + data.runs.map((run, index) =>
        `${shortNames[index]} pool ${seconds(run.wait_pool_s)}, budget ${seconds(run.wait_budget_s)}`).join('; '));
    const series = [];
    data.runs.forEach((run, index) => ['wait_pool', 'wait_budget'].forEach((kind, k) => series.push({
      name: `${shortNames[index]} ${kind}`, type: 'line', step: 'end', showSymbol: false,
      color: runColours[index % runColours.length], lineStyle: { type: k === 0 ? 'solid' : 'dashed', width: 1.4 },
      data: run.waiting[kind],
    })));
    chart('waits', 300, {
      legend: { top: 0 }, tooltip: { trigger: 'axis' },
      grid: { left: 60, right: 30, top: 40, bottom: 50 },
      xAxis: timeAxis(), yAxis: { type: 'value', name: 'partitions', minInterval: 1 },
      dataZoom: timeZoom, series: series,
    }, timeGroup);
  }

  function validation() {
    section('Validation (zkpipe validate)');
    if (!data.validation) {
      main.append(element('p', { class: 'note' }, 'No validation table given: run zkpipe validate and pass its validation.md with --validation.'));
      return;
    }
    data.validation.notes.forEach(note => main.append(element('p', { class: 'note' }, note)));
    main.append(table(data.validation.header, data.validation.rows));
  }

  function heatmap() {
    section('Predicted GPU utilization over synthesis threads x pool slabs',
      'cells: the sweep\'s predicted GPU utilization %; circles: measured runs at their settings, labelled with their measured %');
    const map = data.heatmap;
    if (!map) {
      main.append(element('p', { class: 'note' }, 'No sweep table given: run zkpipe sweep over policy.synthesis_threads and policy.pool_slabs and pass it with --sweep.'));
      return;
    }
    chart('heatmap', 130 + map.slabs.length * 44, {
      tooltip: { trigger: 'item', formatter: params => params.seriesIndex === 0
        ? `${map.threads[params.value[0]]} threads, ${map.slabs[params.value[1]]} slabs: predicted ${params.value[2].toFixed(1)} %`
        : `measured ${params.value[3]}: ${params.value[2].toFixed(1)} %` },
      grid: { left: 80, right: 30, top: 34, bottom: 80 },
      xAxis: { type: 'category', data: map.threads.map(String), name: 'synthesis threads', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: map.slabs.map(String), name: 'pool slabs' },
      visualMap: { min: 0, max: 100, calculable: false, orient: 'horizontal', left: 'center', bottom: 0, itemHeight: 160, itemWidth: 12,
        seriesIndex: 0, inRange: { color: ['#d73027', '#fee08b', '#1a9850'] } },
      series: [
        { type: 'heatmap', data: map.cells, label: { show: true, formatter: params => params.value[2].toFixed(0) } },
        { type: 'scatter', z: 10, data: map.measured, symbolSize: 26, itemStyle: { color: 'rgba(0,0,0,0)', borderColor: '#000', borderWidth: 2 },
          label: { show: true, position: 'left', distance: 8, fontSize: 10, color: '#000', textBorderColor: '#fff', textBorderWidth: 3, fontWeight: 'bold',
            formatter: params => `measured ${params.value[2].toFixed(1)} %` } },
      ],
    });
  }

  summaries();
  comparison();
  section('Timelines', 'one lane per resource; hover a span for its phase, partition and times; wheel or drag to zoom, ' +
    'all charts over time together; click a phase to hide it');
  data.runs.forEach(timeline);
  copies();
  gpuBusy();
  phaseBreakdown();
  waits();
  validation();
  heatmap();
  echarts.connect(timeGroup);
})();
