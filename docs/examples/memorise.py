"""A memoriser that speaks structbench's command protocol (docs/command-protocol.md).

    structbench run --suite miniscan --model command --set command='python docs/examples/memorise.py'

It learns nothing: `fit` memorises the train split, then
- transduce answers an input seen in training with its memorised target, and echoes any other;
- classify answers a seen input with its memorised label, any other with the commonest training
  label among those offered;
- logprob scores a sequence under an add-one unigram model of the training tokens, and
  loglikelihood a continuation (its context ignored, as a unigram model does);
- induce gives each of the n_clusters - 1 commonest training tokens a cluster of its own, and
  every other token the last one.
Standard library only: one JSON object per line in, one per line out.
"""

import json
import math
import sys
from collections import Counter
from typing import Any

targets: dict[str, list[str]] = {}
labels: dict[str, str] = {}
label_counts: Counter[str] = Counter()
token_counts: Counter[str] = Counter()


def key(tokens: list[str]) -> str:
    return " ".join(tokens)  # tokens never contain whitespace


def send(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def fit(train: list[dict[str, Any]]) -> None:
    for example in train:
        if "target" in example:
            targets[key(example["input"])] = example["target"]
        if "label" in example:
            labels[key(example["input"])] = example["label"]
            label_counts[example["label"]] += 1
        token_counts.update(example["input"] + example.get("target", []))


def transduce(request: dict[str, Any]) -> list[list[str]]:
    return [targets.get(key(tokens), tokens) for tokens in request["inputs"]]


def classify(request: dict[str, Any]) -> list[str]:
    offered = request["labels"]
    commonest = max(offered, key=lambda label: label_counts[label])  # the first of equals
    seen = [labels.get(key(tokens), commonest) for tokens in request["inputs"]]
    return [label if label in offered else commonest for label in seen]


def unigram(tokens: list[str]) -> float:
    denominator = sum(token_counts.values()) + len(token_counts) + 1
    return sum(math.log((token_counts[token] + 1) / denominator) for token in tokens)


def logprob(request: dict[str, Any]) -> list[float]:
    return [unigram(tokens) for tokens in request["sequences"]]


def loglikelihood(request: dict[str, Any]) -> list[float]:
    return [unigram(continuation) for _context, continuation in request["requests"]]


def induce(request: dict[str, Any]) -> list[list[int]]:
    last = request["n_clusters"] - 1
    commonest = sorted(token_counts, key=lambda token: (-token_counts[token], token))[:last]
    cluster = {token: i for i, token in enumerate(commonest)}
    return [[cluster.get(token, last) for token in tokens] for tokens in request["sentences"]]


METHODS = {
    "transduce": transduce,
    "classify": classify,
    "logprob": logprob,
    "loglikelihood": loglikelihood,
    "induce": induce,
}
PROTOCOLS = ["transduction", "classification", "minimal-pair", "forced-choice", "tag-induction"]

send({"type": "hello", "name": "memorise", "protocols": PROTOCOLS, "continuations": True})
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "close":
        break
    if request["type"] == "fit":
        fit(request["train"])  # request["dev"] is for model selection: a memoriser has nothing to select
        send({"type": "ok", "compute": {"device": "cpu"}})
    elif request["type"] == "predict" and request["method"] in METHODS:
        send({"type": "predictions", "outputs": METHODS[request["method"]](request)})
    else:
        send({"type": "error", "message": f"memorise.py cannot answer {line[:80]!r}"})
