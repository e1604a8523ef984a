/* streamdq console: reads the /v1 API of the same server and draws with the vendored vega-embed.
 * State: the selected dataset, the time range [start, end) (text as typed: epoch seconds or ISO
 * 8601, empty = unbounded), the field/aggregation/metric picked and the quarantine page.
 * Every 5 s (when "refresh" is on) everything shown is fetched again; charts are redrawn only
 * when their data changed. A bearer token given as /#token=... is sent with every API call. */
"use strict";

const ui = {
  dataset: null,
  start: "",
  end: "",
  field: null,
  aggregation: null,
  metric: null,
  qOffset: 0,
  qLimit: 20,
  drawn: {},
};
window.streamdqViews = {};
window.streamdqState = ui;

const token = (() => {
  const m = /token=([^&]+)/.exec(location.hash || "");
  if (m) sessionStorage.setItem("streamdq-token", decodeURIComponent(m[1]));
  return sessionStorage.getItem("streamdq-token");
})();

const $ = (id) => document.getElementById(id);

function showError(text) {
  $("error").textContent = text || "";
}

async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") url.searchParams.set(k, v);
  }
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const response = await fetch(url, { headers });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function rangeParams() {
  return { startTimestamp: ui.start, endTimestamp: ui.end };
}

function enc(s) {
  return encodeURIComponent(s);
}

function fmtTime(epoch) {
  if (epoch === null || epoch === undefined) return "";
  return new Date(epoch * 1000).toISOString().replace(".000Z", "Z");
}

function setRows(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) td.className = cls;
  return td;
}

async function draw(name, element, spec, data) {
  const key = JSON.stringify(data);
  if (ui.drawn[name] === key && window.streamdqViews[name]) return window.streamdqViews[name];
  ui.drawn[name] = key;
  const result = await vegaEmbed(element, spec, { actions: false, renderer: "svg" });
  window.streamdqViews[name] = result.view;
  return result.view;
}

function clearChart(name, element, text) {
  delete window.streamdqViews[name];
  delete ui.drawn[name];
  element.textContent = text || "";
}

/* -- datasets ------------------------------------------------------------------ */
async function loadDatasets() {
  const datasets = await api("/v1/datasets");
  if (!ui.dataset && datasets.length) ui.dataset = datasets[0].dataset;
  setRows(
    document.querySelector("#datasets tbody"),
    datasets.map((d) => {
      const tr = document.createElement("tr");
      tr.dataset.dataset = d.dataset;
      if (d.dataset === ui.dataset) tr.className = "selected";
      tr.append(
        cell(d.dataset),
        cell(d.status, "status-" + d.status),
        cell(d.qualityScore === null ? "–" : d.qualityScore, "quality"),
        cell(d.lastBatch + " at " + fmtTime(d.lastProcessingTime)),
      );
      tr.addEventListener("click", () => selectDataset(d.dataset));
      return tr;
    }),
  );
  $("dataset-title").textContent = ui.dataset || "no dataset has committed a batch yet";
}

function selectDataset(name) {
  ui.dataset = name;
  ui.field = ui.aggregation = ui.metric = null;
  ui.qOffset = 0;
  ui.drawn = {};
  refresh();
}

/* -- timeline: volume per window, alerts as rules, a brush to pick the range -------- */
async function loadTimeline(fields) {
  const d = ui.dataset;
  const whole = fields.find((f) => f.field === "*" && f.aggregations.includes("Size"));
  const size = whole
    ? (await api(`/v1/source/${enc(d)}/fields/*/timeseries/Size`)).timeValues
    : [];
  const alerts = await api(`/v1/datasets/${enc(d)}/alerts`);
  const sizeValues = size.map((p) => ({ t: p.timestamp * 1000, t2: (p.windowEnd || p.timestamp) * 1000, rows: p.data }));
  const alertValues = alerts.map((a) => ({
    t: a.timestamp * 1000,
    kind: a.kind,
    constraint: a.constraint || a.check || "",
    message: a.message || "",
  }));
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: "container",
    height: 120,
    datasets: { size: sizeValues, alerts: alertValues },
    layer: [
      {
        data: { name: "size" },
        mark: { type: "bar", tooltip: true },
        params: [{ name: "brush", select: { type: "interval", encodings: ["x"] } }],
        encoding: {
          x: { field: "t", type: "temporal", title: "window (UTC)" },
          x2: { field: "t2" },
          y: { field: "rows", type: "quantitative", title: "rows per window" },
          y2: { datum: 0 },
        },
      },
      {
        data: { name: "alerts" },
        mark: { type: "rule", color: "#b00020", strokeWidth: 2, tooltip: true },
        encoding: { x: { field: "t", type: "temporal" }, tooltip: [{ field: "kind" }, { field: "constraint" }, { field: "message" }] },
      },
    ],
  };
  const view = await draw("timeline", $("timeline"), spec, [sizeValues, alertValues]);
  if (!view.__brushBound) {
    view.__brushBound = true;
    let settle = null;
    view.addSignalListener("brush", (_name, value) => {
      const t = value && value.t;
      if (t && t.length === 2) {
        $("start").value = new Date(Math.min(+t[0], +t[1])).toISOString();
        $("end").value = new Date(Math.max(+t[0], +t[1])).toISOString();
        // apply once the drag has settled (vega keeps the pointer events to itself)
        clearTimeout(settle);
        settle = setTimeout(() => {
          if ($("start").value !== ui.start || $("end").value !== ui.end) applyRange();
        }, 400);
      }
    });
  }
  setRows(
    $("timeline-alerts"),
    alerts.map((a) => {
      const li = document.createElement("li");
      li.dataset.alertId = a.alert_id;
      li.textContent = `${fmtTime(a.timestamp)} ${a.kind}: ${a.constraint || a.check || ""} ${a.message || ""}`;
      return li;
    }),
  );
  return alerts;
}

async function loadChecks() {
  const d = ui.dataset;
  const results = await api(`/v1/datasets/${enc(d)}/results`, { ...rangeParams(), limit: 2000 });
  const alerts = await api(`/v1/datasets/${enc(d)}/alerts`, rangeParams());
  const values = results.map((r) => ({
    t: r.timestamp * 1000,
    constraint: r.constraint,
    status: r.status,
    scope: r.scope,
    message: r.message || "",
  }));
  const alertValues = alerts.map((a) => ({ t: a.timestamp * 1000, kind: a.kind }));
  if (!values.length) {
    clearChart("checks", $("checks-chart"), "no check results in this range");
  } else {
    const spec = {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: "container",
      datasets: { results: values, alerts: alertValues },
      layer: [
        {
          data: { name: "results" },
          mark: { type: "tick", thickness: 2, tooltip: true },
          encoding: {
            x: { field: "t", type: "temporal", title: "time (UTC)" },
            y: { field: "constraint", type: "nominal", title: null },
            color: {
              field: "status",
              type: "nominal",
              scale: { domain: ["Success", "Failure"], range: ["#1b7f3b", "#b00020"] },
            },
            tooltip: [{ field: "constraint" }, { field: "status" }, { field: "scope" }, { field: "message" }],
          },
        },
        {
          data: { name: "alerts" },
          mark: { type: "rule", color: "#b00020", strokeDash: [4, 2] },
          encoding: { x: { field: "t", type: "temporal" } },
        },
      ],
    };
    await draw("checks", $("checks-chart"), spec, [values, alertValues]);
  }
  // check trend: outcomes per time bucket, stacked by status
  if (!values.length) {
    clearChart("checkTrend", $("checks-trend"), "");
  } else {
    const spec = {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: "container",
      height: 100,
      title: "check outcomes over time",
      data: { values },
      mark: "bar",
      encoding: {
        x: { field: "t", type: "temporal", timeUnit: "utcyearmonthdatehoursminutes", title: null },
        y: { aggregate: "count", title: "results" },
        color: { field: "status", scale: { domain: ["Success", "Failure"], range: ["#1b7f3b", "#b00020"] } },
      },
    };
    await draw("checkTrend", $("checks-trend"), spec, values);
  }
}

/* -- field -> aggregation -> chart ------------------------------------------------ */
function fillSelect(select, options, current) {
  const values = options.map((o) => o.value);
  const same = select.options.length === values.length && values.every((v, i) => select.options[i].value === v);
  if (!same) {
    select.replaceChildren(
      ...options.map((o) => {
        const opt = document.createElement("option");
        opt.value = o.value;
        opt.textContent = o.label;
        return opt;
      }),
    );
  }
  if (current !== null && values.includes(current)) select.value = current;
  return select.value || null;
}

async function loadAggregation(fields) {
  const d = ui.dataset;
  const asked = { start: ui.start, end: ui.end }; // the range this answer is for (ui may change meanwhile)
  const range = { startTimestamp: asked.start, endTimestamp: asked.end };
  const withFields = fields.filter((f) => f.aggregations.length);
  ui.field = fillSelect(
    $("field"),
    withFields.map((f) => ({ value: f.field, label: f.field === "*" ? "* (dataset)" : f.field })),
    ui.field,
  );
  const field = ui.field; // this answer's field (ui may change meanwhile)
  if (!field) {
    $("merged-value").textContent = "–";
    clearChart("aggregation", $("agg-chart"), "no window metrics yet");
    return;
  }
  const aggs = await api(`/v1/source/${enc(d)}/fields/${enc(field)}/aggregations`, range).catch(() => []);
  const options = aggs.map((a) => ({
    value: a.key || a.name,
    label: a.name + (Object.keys(a.parameters).length ? " " + JSON.stringify(a.parameters) : "") + (a.combinable ? "" : " (series only)"),
  }));
  const picked = fillSelect($("aggregation"), options, ui.aggregation);
  ui.aggregation = picked;
  const agg = aggs.find((a) => (a.key || a.name) === picked);
  if (!agg) {
    $("merged-value").textContent = "–";
    clearChart("aggregation", $("agg-chart"), "no aggregation in this range");
    return;
  }
  $("quantile-label").hidden = agg.name !== "ApproxQuantile";
  const base = `/v1/source/${enc(d)}/fields/${enc(field)}`;
  const keyParam = agg.key ? { key: agg.key } : {};
  const merged = agg.combinable
    ? await api(`${base}/aggregations/${enc(agg.name)}`, {
        ...range,
        ...keyParam,
        quantile: agg.name === "ApproxQuantile" ? $("quantile").value : "",
      })
    : null;
  const out = $("merged-value");
  out.textContent = merged ? JSON.stringify(merged.data) : "not combinable: see the series";
  out.dataset.start = asked.start;
  out.dataset.end = asked.end;
  out.dataset.aggregation = agg.name;
  out.dataset.field = field;
  $("merged-windows").textContent = merged
    ? `(${merged.windows} windows${merged.approximate ? ", approximate" : ""}${merged.failure ? ", " + merged.failure : ""})`
    : "";
  const isHistogram = merged && merged.data !== null && typeof merged.data === "object";
  if (isHistogram) {
    const values = Object.entries(merged.data).map(([k, v]) => ({ key: k, count: v }));
    const spec = {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: "container",
      title: `${agg.name}(${field}) merged over the range`,
      data: { values },
      mark: { type: "bar", tooltip: true },
      encoding: {
        x: { field: "key", type: "nominal", sort: "-y", title: field },
        y: { field: "count", type: "quantitative" },
      },
    };
    await draw("aggregation", $("agg-chart"), spec, values);
    return;
  }
  const series = (await api(`${base}/timeseries/${enc(agg.name)}`, { ...range, ...keyParam })).timeValues;
  const values = series
    .filter((p) => typeof p.data === "number")
    .map((p) => ({ t: p.timestamp * 1000, value: p.data, open: !!p.open }));
  if (!values.length) {
    clearChart("aggregation", $("agg-chart"), "no values in this range");
    return;
  }
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: "container",
    title: `${agg.name}(${field}) per window`,
    data: { values },
    mark: { type: "line", point: true, tooltip: true },
    encoding: {
      x: { field: "t", type: "temporal", title: "window start (UTC)" },
      y: { field: "value", type: "quantitative", title: agg.name },
    },
  };
  await draw("aggregation", $("agg-chart"), spec, values);
}

/* -- quality score ---------------------------------------------------------------- */
async function loadQuality() {
  const points = await api(`/v1/datasets/${enc(ui.dataset)}/quality`, rangeParams());
  const scored = points.filter((p) => p.score !== null);
  if (!scored.length) {
    const last = points[points.length - 1];
    clearChart("quality", $("quality-chart"), last ? `not scored yet: ${last.message}` : "no quality score (quality_score: not configured)");
    $("quality-drivers").replaceChildren();
    return;
  }
  const values = scored.map((p) => ({
    t: p.timestamp * 1000,
    score: p.score,
    drivers: p.drivers.map((x) => `${x.series} ${Number(x.deviation).toFixed(2)} sd`).join(", "),
  }));
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: "container",
    height: 120,
    data: { values },
    mark: { type: "line", point: true, tooltip: true },
    encoding: {
      x: { field: "t", type: "temporal", title: "window start (UTC)" },
      y: { field: "score", type: "quantitative", scale: { domain: [0, 12] }, title: "quality score (0 = normal)" },
      tooltip: [{ field: "t", type: "temporal" }, { field: "score" }, { field: "drivers" }],
    },
  };
  await draw("quality", $("quality-chart"), spec, values);
  const last = scored[scored.length - 1];
  const box = $("quality-drivers");
  const parts = [`window ${fmtTime(last.timestamp)}: score ${last.score}`];
  if (last.detail) {
    parts.push("components: " + last.components.map((c) => `${c.component} ${c.score}`).join(", ") + `, residual ${last.residualScore}`);
    parts.push("drivers: " + (last.drivers.map((x) => `${x.series} ${Number(x.deviation).toFixed(2)} sd`).join(", ") || "none"));
  }
  box.replaceChildren(...parts.map((t) => Object.assign(document.createElement("p"), { textContent: t })));
}

/* -- metric trends ------------------------------------------------------------------ */
async function loadMetric() {
  const d = ui.dataset;
  const catalog = await api(`/v1/datasets/${enc(d)}/metrics`, rangeParams());
  const options = catalog
    .filter((m) => m.scope !== "batch")
    .map((m) => ({ value: JSON.stringify([m.name, m.instance, m.scope, m.key]), label: `${m.name}(${m.instance}) ${m.scope}` }));
  ui.metric = fillSelect($("metric"), options, ui.metric);
  if (!ui.metric) {
    clearChart("metric", $("metric-chart"), "no metrics in this range");
    return;
  }
  const [name, instance, scope, key] = JSON.parse(ui.metric);
  const points = await api(`/v1/datasets/${enc(d)}/metrics/${enc(name)}`, { ...rangeParams(), instance, scope, key });
  const values = points.filter((p) => typeof p.value === "number").map((p) => ({ t: p.timestamp * 1000, value: p.value }));
  if (!values.length) {
    clearChart("metric", $("metric-chart"), "no numeric values in this range");
    return;
  }
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: "container",
    height: 120,
    title: `${name}(${instance}) at ${scope} scope`,
    data: { values },
    mark: { type: "line", point: true, tooltip: true },
    encoding: {
      x: { field: "t", type: "temporal", title: "time (UTC)" },
      y: { field: "value", type: "quantitative", title: name },
    },
  };
  await draw("metric", $("metric-chart"), spec, values);
}

/* -- measure/check/pass documents ------------------------------------------------------ */
async function loadPass() {
  const docs = await api(`/v1/datasets/${enc(ui.dataset)}/pass`, { ...rangeParams(), limit: 50 });
  setRows(
    document.querySelector("#pass-docs tbody"),
    docs.reverse().map((d) => {
      const tr = document.createElement("tr");
      const failed = Object.entries(d.check).filter(([, ok]) => !ok).map(([name]) => name);
      tr.dataset.scope = d.scope || "";
      tr.dataset.time = String(d.windowStart ?? d.timestamp);
      tr.append(
        cell(fmtTime(d.windowStart ?? d.timestamp)),
        cell(d.scope),
        cell(d.pass ? "pass" : "FAIL", d.pass ? "status-Success" : "status-Error"),
        cell(failed.join(", ")),
        cell(JSON.stringify(d.measure), "raw"),
      );
      return tr;
    }),
  );
}

/* -- quarantine and programs ----------------------------------------------------------- */
async function loadQuarantine() {
  const page = await api(`/v1/datasets/${enc(ui.dataset)}/quarantine`, {
    ...rangeParams(),
    offset: ui.qOffset,
    limit: ui.qLimit,
    reason: $("q-reason").value,
  });
  setRows(
    document.querySelector("#quarantine tbody"),
    page.rows.map((r) => {
      const tr = document.createElement("tr");
      const where = r.file ? `${r.file}:${r.line ?? ""}` : r.topic ? `${r.topic}[${r.partition}]@${r.offset}` : r.source || "";
      tr.append(cell(fmtTime(r.ingested_at)), cell(r.batch_id), cell(r.reason), cell(r.raw, "raw"), cell(where));
      return tr;
    }),
  );
  const last = Math.min(page.offset + page.rows.length, page.total);
  $("q-info").textContent = page.total ? `${page.offset + 1}–${last} of ${page.total}` : "none";
  $("q-prev").disabled = page.offset === 0;
  $("q-next").disabled = last >= page.total;
}

async function loadPrograms() {
  const programs = await api(`/v1/datasets/${enc(ui.dataset)}/programs`);
  const box = $("programs");
  if (!programs.length) {
    box.textContent = "none learned (auto_validate: not configured, or not enough closed windows yet)";
    return;
  }
  box.replaceChildren(
    ...programs.map((p) => Object.assign(document.createElement("pre"), { textContent: p.description })),
  );
}

/* -- refresh loop ---------------------------------------------------------------------- */
let running = false;
let again = false;
async function refresh() {
  if (running) {
    again = true; // a change during a refresh: run once more with it when this one ends
    return;
  }
  running = true;
  again = false;
  try {
    await loadDatasets();
    if (ui.dataset) {
      const fields = await api(`/v1/source/${enc(ui.dataset)}/fields`);
      const rangedFields = ui.start || ui.end ? await api(`/v1/source/${enc(ui.dataset)}/fields`, rangeParams()) : fields;
      await loadTimeline(fields);
      await loadChecks();
      await loadAggregation(rangedFields);
      await loadQuality();
      await loadMetric();
      await loadPass();
      await loadQuarantine();
      await loadPrograms();
    }
    showError("");
    $("refreshed").textContent = "updated " + new Date().toISOString().slice(11, 19) + " UTC";
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  } catch (err) {
    showError(String(err.message || err));
  } finally {
    running = false;
    if (again) refresh();
  }
}

function applyRange() {
  ui.start = $("start").value.trim();
  ui.end = $("end").value.trim();
  ui.qOffset = 0;
  refresh();
}

$("range-form").addEventListener("submit", (e) => {
  e.preventDefault();
  applyRange();
});
$("clear-range").addEventListener("click", () => {
  $("start").value = "";
  $("end").value = "";
  applyRange();
});
$("field").addEventListener("change", () => {
  ui.field = $("field").value;
  ui.aggregation = null;
  refresh();
});
$("aggregation").addEventListener("change", () => {
  ui.aggregation = $("aggregation").value;
  refresh();
});
$("quantile").addEventListener("change", refresh);
$("metric").addEventListener("change", () => {
  ui.metric = $("metric").value;
  refresh();
});
$("q-form").addEventListener("submit", (e) => {
  e.preventDefault();
  ui.qOffset = 0;
  refresh();
});
$("q-prev").addEventListener("click", () => {
  ui.qOffset = Math.max(0, ui.qOffset - ui.qLimit);
  refresh();
});
$("q-next").addEventListener("click", () => {
  ui.qOffset += ui.qLimit;
  refresh();
});
setInterval(() => {
  if ($("auto-refresh").checked) refresh();
}, 5000);
refresh();
