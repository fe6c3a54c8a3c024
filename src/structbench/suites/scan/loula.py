"""SCAN templates, fillers and few-shot (Loula, Baroni & Lake 2018; Korrel 2018 experiments 4-6).

Reproduces the three SCAN experiments of Loula et al. that Korrel 2018 (§4.3, §6.3.3, Fig. 6.5)
calls SCAN experiments 4-6, from the official files (github.com/brendenlake/SCAN, commit
c4b756c, folders `template_split`, `filler_split` and `few_shot_split`):

- `scan-template-jump-around-right`, `scan-template-right`, `scan-template-opposite-right`,
  `scan-template-around-right` (experiment 4): every command holding the template (`jump around
  right`; `X right`, `X opposite right`, `X around right` for a primitive X) is in test, training
  never sees one.
- `scan-filler-0` ... `scan-filler-3` (experiment 5): test is every command with `jump around
  right`; training holds `X around right` for 0 to 3 fillers X (look, then walk, then run). The
  filler series is drawn as a curve against the number of fillers.
- `scan-fewshot-1` ... `scan-fewshot-1024` (experiment 6): the 0-filler training set plus k
  commands with `look around right`, k = 1, 2, 4, ..., 1024, drawn five times upstream
  (`rep1`-`rep5`): those are the suite's five draws, seed s reads `rep` (s mod 5) + 1. The series
  is a learning curve against k (log axis), with `scan-filler-0` as its point k = 0.

Examples are built as in every SCAN suite (`structbench.suites.scan.common`): inputs end with `.`,
each example carries Korrel's attention targets (§5.3.3), and scores break down by command template,
output length, command length and `around`/`opposite`. The interpreter is the oracle.

Sources. The filler and few-shot test files upstream (`tasks_test_filler_num{0-3}.txt`,
`tasks_test_fewshot_num{k}_rep{r}.txt`: 59 files) are byte-identical to
`template_split/tasks_test_template_jump_around_right.txt` (one git blob at c4b756c), so every filler
and few-shot suite pins one of them, `filler_split/tasks_test_filler_num0.txt`, which is the copy
reference folders keep. Likewise upstream's 0-filler train file is the `around right` template's
train file and its 3-filler train file the `jump around right` template's: `scan-filler-0` trains on
`scan-template-around-right`'s data, and `scan-filler-3` is the same data as
`scan-template-jump-around-right` (both kept, as each experiment names its own).

Test roles: every test is a generalisation split (a template, or `jump around right`, that
training never shows).

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

from collections.abc import Sequence

from structbench.data.sources import SourceFile
from structbench.specs import Example, SeriesPoint, SplitSpec, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, SuiteSet, member
from structbench.suites.scan.common import (
    CITATION,
    DEV_FRACTION,
    ScanSuite,
    parse_scan_file,
    scan_source,
)

CHECKED = """How it was checked (tests/suites/scan/test_loula.py): the suites' sizes are the official files' line
counts (template tests 1,173 / 4,476 / 4,476 / 4,476, filler trains 15,225 / 16,290 / 17,391 /
18,528, few-shot trains 15,225 + k, train and dev together); each template split equals, on
`tasks.txt`, "every command holding the template in test, every command holding its `turn`
form (`turn around right`, `turn right`, `turn opposite right`) in neither, the rest in train"; the
n-filler train set is the 0-filler one plus every command holding `X around right` for the first n
fillers; each few-shot train file is the 0-filler train set, in order, followed by distinct commands
of the 1-filler set that hold `look around right`; the oracle scores 1.0 on every suite."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """What deviates, and what upstream does that the experiments' wording does not say:
- dev: 10% of the published train lines for model selection, as in every SCAN suite; for the few-shot
  suites only from the 0-filler lines, so that train keeps all k added commands (a uniform 10% would
  leave k = 1 with no `look around right` command in about one draw of ten) and every k of a draw
  selects on the same dev split;
- the `.` ending every input (Korrel's input format);
- upstream, not us: the template splits leave out the 1,209 commands holding the template's `turn`
  form, from train and test alike; and five few-shot files add fewer commands than k (k = 32, rep3:
  31; k = 64: 61, 61, 63, 62, 60), so those suites' train sizes differ between draws. Both are
  kept as published."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

LOULA = (
    "Loula, Baroni & Lake 2018, Rearranging the familiar: Testing compositional generalization in recurrent networks"
)
KORREL = "Korrel 2018, From Sequence to Attention (MSc thesis), §4.3 and §6.3.3"
TEMPLATE_SHA256 = {
    "jump_around_right": (
        "f63ba9149feeb021fbb44132265d7b15e6a07e6b12c9d3220418d97d97d71735",
        "a3a27e06adece97da26ae506de08c4b6848035970c561691edbf4dcb1e45f9af",
    ),
    "right": (
        "a09e125dc95c59843d087fd50852c57bc4e77997e2cd69aa04a9a934eea9089b",
        "506bed814f8a6ec1eef9c226eb9b2055bc984925902a94d020a23a41080993bb",
    ),
    "opposite_right": (
        "b4fe224a2dd636952a90b7e5552017620ab07e0c465db0ee2dddfb0f727feeb6",
        "e7fc129633f82decd39248517a8945385b77009f721f9f4f58df213f73a29a47",
    ),
    "around_right": (
        "d5d35d174d557645fc61f289424afa0d95fde21422c59a9819e2d0fcfa9d419f",
        "fc78a5d1077dc2c206d6c42ed89fb9022867618c3f331179bafd3ec1ca699474",
    ),
}
"""Template -> SHA-256 of its (train, test) file."""
FILLER_SHA256 = (
    "d5d35d174d557645fc61f289424afa0d95fde21422c59a9819e2d0fcfa9d419f",
    "fe2208764e3b873420d31929e137918566b9e49d0052f7be2af68ad129006273",
    "732f3663553b2a41a9a37d2f07c9719a4d9d3f2cd190380e572697b2e4ea730f",
    "f63ba9149feeb021fbb44132265d7b15e6a07e6b12c9d3220418d97d97d71735",
)
"""SHA-256 of the n-filler train file, by n."""
FEWSHOT_SHA256 = {
    1: ("27fada37fdbbaf67f238ae77222cc8df479bb1889c60df94f3375c42294de44a", "22e2c09cdf219813e3851f2bbaf346a8fc7b0bca677e3cecb6fe38a128fa4ef9", "ed47a8bcf394eb03ebfdb4b88537dc01188f661af721325aa125541c1d77a0d7", "aa93537561dac70036ba33cd7124bad7f9c94d10b56b78cea24bc1742518e364", "d1322320b54f74c94b9a577a9461894501b94278965681fbd01074b1e590f176"),
    2: ("f02b0f92396497f90f1f17840558fde0cb0b69474c0242aecb74ef863c8b6fe7", "94c9b5bbb6cf41bea46671dba1eab5dbc2fee0b0933fca46a317dc73d64366b8", "9fa7924645302b55da1a94d2daa356ff057e78b7c3aeae6bd00178c184554e0b", "41c3b03c9034331c07195651d871dc671db40048df5fc7afaeb4cc52d314f2a5", "b32bf642ace8a44328f9ebca0a63af99783a6ef9ecab80371c03366ffa77a179"),
    4: ("18bbee0f646eedd1a1c3fe96188712c4c036aabf9947b75cc58ebec8682dde78", "6b2e59b4719491c5b71e132e0db92f01d0f2eaa5e9c67b24ad6a49ef13ee0dc0", "72a09fbb0a545164ba86b70401581cd6209da1d47ec5373eb2a2b142ae14f05f", "29372f83a807b9596159aae4c687d2d5e9bbd8108bca4e23d8a4230c993ddd74", "59c5dd76687cde6c9b719c61ba05463699f3cfb716044251d9e0be2c46f23193"),
    8: ("e07284d55aa481dd7e4b4a018ee227e2112d0c3740c731d63a62875ab570b75c", "2a17346979a50975602f541a7d4df940cdd1da0e12b28801efa4a2f57f1bbfa8", "5b051ea172298410f111bb5b0db516a831148d66d08d58474ca32302840380f2", "b6d02143c5ac98aef7a2dac1842a387b38c0ae73ecb636a4432920e1ea04e45e", "2370a50137b9b3e5b05a97660effbd2c266c1fe9a4f87a1a21191a23d7c164e6"),
    16: ("2d339b206ea6c82d0f5cdc2ba2f9714a314908469a53199d4c9c356dcbc4803c", "fa7a19dd835b7f683fce94fe9915dc7ba418ba63a5be1c5344975891df51dbcd", "f57a69f171232b49884c06e958b9d78ce9938e9bdb6eb864a20320f1e6737d59", "31c1c01f6822490767184b5907e7a8e5e5f251775e368a99b242bf39622cc1b6", "bb2c9c5217bd55fc2c25a79275280ff6a4183a441832b82c51940978d5389271"),
    32: ("12c1e2e75c89869549d490d1acbd8d8223266ea7b2672dc0d7d29b142853110a", "51dde7048afaa29598df045d52b46ecfb2ca03ddea09f69250544d7c77782956", "53f04d1885b7d74d7e64b74a015c563113a754fe69343e23848815ffe8a3f21e", "6834d83dcd8ab816af62582d598641151dc1dd79c898b16e9d07298572c0192b", "30eebb8ac94ab23eab33be24884834bfebd42659733d0365a1d126af08ea011f"),
    64: ("945cce552e21247fa1ac56b024e1c8c327a39dd88d03e0ecd76fbbe7a021a359", "9308454cb53d55cf87e0cd9b6a1ac64337847b98b82b52e50dd69c2b3528772b", "c9889faf7dbd334556886a24523ddf604729da30edfa49e890f467287d3acc0d", "0ca4195b2a8233f8ac285f8cd2fba96f8fa13740f199f65021e33b30ecfbfb5c", "c0290a1037f91f9a9b0d93c732c35d13641daed7d7c05e32feb85efe1d202a54"),
    128: ("56a9ae6a7d5720ffb626ddc6e47271ab9c5ae98a234334ca980f407177d378f4", "f074764a2dc6fd4fffbf131f9ded39fae75cbd966e5c667e6c58620984bb2ff9", "e2b437af6b9ecf45543e7f13de0b24d53df1196375ff23e7690756c57c99e601", "47dd60f916326d96b4fab9e0f225db86fb838b498c59921b0806d39a5e42fa3f", "86781b800497640cf56d9eb7ef52d8a72b6c8609523a578de97a424a263cfa4b"),
    256: ("8c12115d42cabf2cbe878e8fa7deab41d1eec47cce6e62180f7597b5fd28aeb1", "d4dec4fd663100e603c175bdb5ab8ed1bf4db0cf68122bf3d0880de814c718df", "163a05ca6f52f20e9f9cd667c621def5ad25bc0414354e1d711182c02b55fe93", "266bbd93528334ed4de3e556cb0dcd9077196fbc79a6ec9523486db790940566", "b763bbfb79beed66eac1b703a8a9f9016daa765c8f8886f5eda016ec0d61915b"),
    512: ("9087ec6c540cbb859d9f74a2ede414e2146c68e90da4535567bbbe68d3d4ba71", "a1dc1eab1375c765b2b38d75ab786be168cd6105428853be0df33e0e0c898448", "a8bf8304d8237e8974429915faea1a0c931426c33f31c2e6f983820644fd4cf1", "0490a518bec2b0d4282808c7c5db5ce9b6832ccdb2e74531997cf352bb142383", "38359225ded9e79a36a1a686c024afc1ec416d6736bafce29c32694ab2a2f543"),
    1024: ("1493a56c7fe26a2b116c7daa823c8e9790cafae6755d856a75b2740a0274baed", "00e1bda603a1b064b418fcaad998a3182375da5fe484b76851b5f2739b5aebbc", "a3f1ae0158b8c20c0c5c290fa9ae8ac7284663b1a7fd99cd3eb02dc23608e3d3", "fe5f646abfed8c940e4e58dffbf77fc31f61826dabead51d2de187b746aeb39e", "bd0469cab39597b0a79c4967ddf9017e5eadda85dabbf72210e4d57a1383c710"),
}  # fmt: skip
"""k -> SHA-256 of the few-shot train file of each upstream draw, rep1 to rep5."""
FEWSHOT_ADDED = {32: (32, 32, 31, 32, 32), 64: (61, 61, 63, 62, 60)}
"""Few-shot files that add fewer commands than k upstream: k -> commands added per draw."""
JUMP_AROUND_RIGHT_TEST = scan_source(
    "filler_split/tasks_test_filler_num0.txt",
    "filler_split/tasks_test_filler_num0.txt",
    "a3a27e06adece97da26ae506de08c4b6848035970c561691edbf4dcb1e45f9af",
)
"""The test file of every filler and few-shot suite (all 59 upstream copies are the same bytes)."""
N_DRAWS = 5
BASE_TRAIN = 15225
"""Lines of the 0-filler train file, on which the few-shot train files build."""
FILLER_ORDER = ("look", "walk", "run")
FILLER_AXIS = "fillers: primitives X with `X around right` in train (look, walk, run)"
FEWSHOT_AXIS = "k: `look around right` commands in train"

SCAN_LOULA = SuiteSpec(
    id="scan-loula",
    version="1.0.0",
    family="systematicity",
    protocol="transduction",
    description="SCAN commands to action sequences.",
    citation=f"{LOULA}; {KORREL}; SCAN: {CITATION}",
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="sequence_accuracy",
    recipe="scan",
    splits=[train_split(0), dev_split(0), scored_split("test", 0, "generalisation")],
)
"""What the suites of experiments 4-6 share; each declares its id, description, splits and series."""


def _splits(train: int | None, dev: int, test: int, held_out: str, train_holds: str) -> list[SplitSpec]:
    """train, dev and test of one suite: `train`/`dev` per draw (None: differs between draws)."""
    return [
        train_split(train, f"{train_holds}, less dev"),
        dev_split(dev, "10% of the published train lines (model selection)"),
        scored_split("test", test, "generalisation", f"every command with {held_out} (the published test file)"),
    ]


def _published(train: int, test: int, held_out: str, train_holds: str) -> list[SplitSpec]:
    dev = round(DEV_FRACTION * train)
    return _splits(train - dev, dev, test, held_out, train_holds)


class PublishedSplitSuite(ScanSuite):
    """A suite of one published train file and one published test file (its sources, in that order)."""

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        train_file, test_file = (source.path for source in self.sources)
        train = parse_scan_file(files.read_text(train_file), train_file)
        return self.train_dev_test(train, parse_scan_file(files.read_text(test_file), test_file), draw)


def _template_sources(name: str) -> tuple[SourceFile, ...]:
    return tuple(
        scan_source(f"template_split/{file}", f"template_split/{file}", sha256)
        for file, sha256 in zip(
            (f"tasks_train_template_{name}.txt", f"tasks_test_template_{name}.txt"), TEMPLATE_SHA256[name], strict=True
        )
    )


def _template(name: str, title: str, train: int, test: int) -> SuiteSpec:
    return SCAN_LOULA.variant(
        id=f"scan-template-{name.replace('_', '-')}",
        description=f"SCAN template split (Korrel's experiment 4): every command with {title} in test, none in train.",
        splits=_published(train, test, title, "the published train file: no command with the template"),
    )


TEMPLATES = SuiteSet(
    member(PublishedSplitSuite, f"ScanTemplate{cls}", doc, spec=_template(name, title, train, test), sources=_template_sources(name))
    for cls, name, title, train, test, doc in (
        ("JumpAroundRight", "jump_around_right", "`jump around right`", 18528, 1173,
         "SCAN template split `jump around right` (same data as `scan-filler-3`)."),
        ("Right", "right", "`X right` (X a primitive)", 15225, 4476, "SCAN template split `X right` for a primitive X."),
        ("OppositeRight", "opposite_right", "`X opposite right` (X a primitive)", 15225, 4476,
         "SCAN template split `X opposite right` for a primitive X."),
        ("AroundRight", "around_right", "`X around right` (X a primitive)", 15225, 4476,
         "SCAN template split `X around right` for a primitive X."),
    )
)  # fmt: skip
"""Experiment 4: `scan-template-*`, one suite per held-out template (class, template, title, train and
test lines, docstring)."""


def _filler(n: int, train: int) -> tuple[SuiteSpec, tuple[SourceFile, ...]]:
    fillers = ", ".join(f"`{x} around right`" for x in FILLER_ORDER[:n]) or "no `X around right`"
    name = f"tasks_train_filler_num{n}.txt"
    spec = SCAN_LOULA.variant(
        id=f"scan-filler-{n}",
        description=f"SCAN filler split (Korrel's experiment 5): train holds {fillers}; test is every command "
        "with `jump around right`.",
        splits=_published(train, 1173, "`jump around right`", f"the published {n}-filler train file ({fillers})"),
        series=[SeriesPoint(series="scan-fillers", axis=FILLER_AXIS, value=n)]
        + ([SeriesPoint(series="scan-fewshot", axis=FEWSHOT_AXIS, value=0, log_axis=True)] if n == 0 else []),
    )
    sources = (scan_source(f"filler_split/{name}", f"filler_split/{name}", FILLER_SHA256[n]), JUMP_AROUND_RIGHT_TEST)
    return spec, sources


FILLERS = SuiteSet(
    member(PublishedSplitSuite, f"ScanFiller{n}", doc, spec=spec, sources=sources)
    for n, train, doc in (
        (0, 15225, "SCAN filler split, 0 fillers: no `X around right` in train (the few-shot series' k = 0)."),
        (1, 16290, "SCAN filler split, 1 filler: `look around right` in train."),
        (2, 17391, "SCAN filler split, 2 fillers: `look around right` and `walk around right` in train."),
        (3, 18528, "SCAN filler split, 3 fillers: `look`, `walk` and `run around right` in train (same data as "
         "`scan-template-jump-around-right`)."),
    )
    for spec, sources in [_filler(n, train)]
)  # fmt: skip
"""Experiment 5: `scan-filler-0` to `scan-filler-3` (fillers, lines of the published train file, docstring)."""


class FewShotSuite(ScanSuite):
    """One k of the few-shot series: draw d is the upstream `rep` d + 1."""

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        train_file = self.sources[draw].path
        train = parse_scan_file(files.read_text(train_file), train_file)
        test = parse_scan_file(files.read_text(JUMP_AROUND_RIGHT_TEST.path), JUMP_AROUND_RIGHT_TEST.path)
        base = [i for i, (command, _) in enumerate(train) if not _holds(command, "look around right")]
        return self.train_dev_test(train, test, draw, eligible=base)


def _holds(command: Sequence[str], phrase: str) -> bool:
    return f" {phrase} " in f" {' '.join(command)} "


def _fewshot(k: int) -> tuple[SuiteSpec, tuple[SourceFile, ...]]:
    added = FEWSHOT_ADDED.get(k, (k,) * N_DRAWS)
    dev = round(DEV_FRACTION * BASE_TRAIN)
    train = BASE_TRAIN - dev + added[0] if len(set(added)) == 1 else None
    commands = (
        f"{k} command{'' if k == 1 else 's'}"
        if train is not None
        else f"{min(added)}-{max(added)} commands (upstream, for k = {k})"
    )
    spec = SCAN_LOULA.variant(
        id=f"scan-fewshot-{k}",
        description=f"SCAN few-shot split (Korrel's experiment 6), k = {k}: the 0-filler train set plus {k} "
        f"command{'' if k == 1 else 's'} with `look around right`, five upstream draws; test is every command with "
        "`jump around right`.",
        n_draws=N_DRAWS,
        splits=_splits(
            train,
            dev,
            1173,
            "`jump around right`",
            f"the 0-filler train set plus the draw's {commands} with `look around right`; dev only from the 0-filler lines",
        ),
        series=[SeriesPoint(series="scan-fewshot", axis=FEWSHOT_AXIS, value=k, log_axis=True)],
    )
    sources = tuple(
        scan_source(f"few_shot_split/{name}", f"few_shot_split/{name}", sha256)
        for rep, sha256 in enumerate(FEWSHOT_SHA256[k], start=1)
        for name in [f"tasks_train_fewshot_num{k}_rep{rep}.txt"]
    )
    return spec, (*sources, JUMP_AROUND_RIGHT_TEST)


FEWSHOT_K = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""The k of experiment 6, one suite each."""
FEWSHOT_NOTE = {32: " (upstream's rep3 adds 31)", 64: " (upstream adds 60 to 63)"}
FEWSHOT = SuiteSet(
    member(
        FewShotSuite,
        f"ScanFewShot{k}",
        f"SCAN few-shot split, k = {k}{FEWSHOT_NOTE.get(k, '')}.",
        spec=spec,
        sources=sources,
    )
    for k in FEWSHOT_K
    for spec, sources in [_fewshot(k)]
)
"""Experiment 6: `scan-fewshot-1` to `scan-fewshot-1024`."""

__getattr__ = SuiteSet.module_getattr(TEMPLATES, FILLERS, FEWSHOT)
