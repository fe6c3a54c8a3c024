#!/usr/bin/env node
// A memoriser that speaks structbench's command protocol (docs/command-protocol.md), for Node.
//
//     structbench run --suite miniscan --model command --set command='node docs/examples/memorise.js'
//
// It learns nothing: `fit` memorises the train split, then
// - transduce answers an input seen in training with its memorised target, and echoes any other;
// - classify answers a seen input with its memorised label, any other with the commonest training
//   label among those offered;
// - logprob scores a sequence under an add-one unigram model of the training tokens, and
//   loglikelihood a continuation (its context ignored, as a unigram model does);
// - induce gives each of the n_clusters - 1 commonest training tokens a cluster of its own, and
//   every other token the last one.
// It answers exactly as docs/examples/memorise.py does. No packages: one JSON object per line in,
// one per line out.
"use strict";

const readline = require("node:readline");

const targets = new Map();
const labels = new Map();
const labelCounts = new Map();
const tokenCounts = new Map();

const key = (tokens) => tokens.join(" "); // tokens never contain whitespace
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const count = (counts, item) => counts.set(item, (counts.get(item) ?? 0) + 1);

function fit(train) {
  for (const example of train) {
    if ("target" in example) targets.set(key(example.input), example.target);
    if ("label" in example) {
      labels.set(key(example.input), example.label);
      count(labelCounts, example.label);
    }
    for (const token of [...example.input, ...(example.target ?? [])]) count(tokenCounts, token);
  }
}

function unigram(tokens) {
  let total = 0;
  for (const n of tokenCounts.values()) total += n;
  const denominator = total + tokenCounts.size + 1;
  return tokens.reduce((sum, token) => sum + Math.log(((tokenCounts.get(token) ?? 0) + 1) / denominator), 0);
}

const methods = {
  transduce: (request) => request.inputs.map((tokens) => targets.get(key(tokens)) ?? tokens),
  classify: (request) => {
    const offered = request.labels;
    let commonest = offered[0]; // the first of equals
    for (const label of offered) if ((labelCounts.get(label) ?? 0) > (labelCounts.get(commonest) ?? 0)) commonest = label;
    return request.inputs.map((tokens) => {
      const label = labels.get(key(tokens));
      return offered.includes(label) ? label : commonest;
    });
  },
  logprob: (request) => request.sequences.map(unigram),
  loglikelihood: (request) => request.requests.map(([, continuation]) => unigram(continuation)),
  induce: (request) => {
    const last = request.n_clusters - 1;
    const commonest = [...tokenCounts.keys()]
      .sort((a, b) => tokenCounts.get(b) - tokenCounts.get(a) || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, last);
    const cluster = new Map(commonest.map((token, i) => [token, i]));
    return request.sentences.map((tokens) => tokens.map((token) => cluster.get(token) ?? last));
  },
};

async function main() {
  const protocols = ["transduction", "classification", "minimal-pair", "forced-choice", "tag-induction"];
  send({ type: "hello", name: "memorise", protocols, continuations: true });
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const request = JSON.parse(line);
    if (request.type === "close") break;
    if (request.type === "fit") {
      fit(request.train); // request.dev is for model selection: a memoriser has nothing to select
      send({ type: "ok", compute: { device: "cpu" } });
    } else if (request.type === "predict" && request.method in methods) {
      send({ type: "predictions", outputs: methods[request.method](request) });
    } else {
      send({ type: "error", message: `memorise.js cannot answer ${JSON.stringify(line.slice(0, 80))}` });
    }
  }
}

main();
