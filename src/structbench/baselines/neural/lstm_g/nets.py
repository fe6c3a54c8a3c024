"""LSTM-g (Monner 2011, ch. 2): a one-layer peephole LSTM and its spatially and temporally local learning rule.

What: the network Monner trains on Distracted Sequence Recall (dissertation §2.7.1, Fig. 2.2): an
input layer, one layer of memory blocks (input gates ι, forget gates φ, memory cells c, output
gates ω, one cell per block), logistic output units θ; forget gates, peephole connections from
each cell to its own three gates, direct input→output connections, no biases (the 10-8-4 DSR
network then has exactly the 416 weights of §2.7.1: 4 x 8 x 10 + 24 + 8 x 4 + 10 x 4), weights
uniform in [-0.1, 0.1) (§2.7.1). Optionally (`recurrent`), the "delayed recurrent connections"
§2.2 names as an augmentation of the architecture: the previous step's gated cell outputs
y_ω·f(s_c) feed the gate and cell layers like further inputs.

`LstmNetwork` holds the weights (a torch module, so the harness can count, save and reload them)
and runs the activation dynamics batched in torch, for evaluation, decoding and the BPTT twin. Its
shape (`Architecture`) is in `settings.py`, which the registered classes load without PyTorch.
`LocalLearner` runs the same dynamics on one sequence in numpy and trains online, after every step
with a target, by one of two local rules:

- `lstm-g`: LSTM-g's rule, eqs. 2.14-2.24 (§2.3);
- `lstm`: the original LSTM algorithm, eqs. 2.5-2.13 (§2.2), Monner's comparator of Fig. 2.3.

The two differ only in the memory cells' error responsibility: LSTM-g's eq. 2.124 adds the error
the output gate sends back over its peephole, δ_ω·w_ωc, which the LSTM algorithm's eq. 2.125
lacks (§2.6); the extra error reaches the input and forget gates' updates too.

How the general graph equations specialise to this topology (what `LocalLearner.step` computes,
vectorised per layer; j indexes blocks, u is the vector of sending activations of the gate and
cell layers, i.e. the input plus, with `recurrent`, the previous gated cell outputs; a = f(ŝ_c) is
the previous cell activation the ι and φ peepholes read, since those layers are activated before
the cells, §2.2; the ω peephole reads the current f(s_c)):

- gains (2.14): connections into c_j are gated by ι_j, c_j's self-connection (weight 1) by φ_j, and
  c_j's connections to the outputs by ω_j; every other connection is ungated. States (2.15-2.16):
  s_ι = W_ι u + p_ι ⊙ a, s_φ = W_φ u + p_φ ⊙ a, s_c = y_φ ⊙ ŝ_c + y_ι ⊙ (W_c u),
  s_ω = W_ω u + p_ω ⊙ f(s_c), s_θ = W_θc (y_ω ⊙ f(s_c)) + W_θx x, y = f(s).
- eligibility traces (2.17): a cell's trace matrix E_c ← y_φ ⊙ Ê_c + y_ι ⊗ u (g_jj w_jj = y_φ,
  g_ji = y_ι); every unit without a self-connection has the trace g_ji·y_i of its sender: u for
  the gates, a or f(s_c) for the peepholes, y_ω ⊙ f(s_c) and x for the output units.
- extended traces (2.18), kept by the gates for the unit k they gate: ι_j and φ_j gate into the
  self-connected c_j only, so each keeps one trace matrix, E_ι ← y_φ ⊙ Ê_ι + (f'(s_ι) ⊙ W_c u) ⊗ u
  (the sum over a is c_j's ungated net input; 2.113-2.114) and E_φ ← y_φ ⊙ Ê_φ + (f'(s_φ) ⊙ ŝ_c) ⊗ u
  (∂g_kk/∂y_j = 1; 2.100-2.101), with the peephole columns read off a. ω_j gates into the output
  units, which have no self-connection, so its extended traces keep no history,
  ε^θk_ωj,i = f'(s_ω,j) u_i w_θk,cj f(s_c,j) (2.77), and enter the update only summed against the
  output deltas; the code forms that sum directly instead of storing the K x H x |u| array.
- deltas (2.21-2.23): δ_θ = t - y_θ (2.10); δ_ω = f'(s_ω) ⊙ f(s_c) ⊙ W_θcᵀ δ_θ (2.22 with G = θ;
  = 2.11); the cell's downstream set P is the output units and, over the peephole, its own output
  gate (ι and φ are upstream), so δ_c = f'(s_c) ⊙ (y_ω ⊙ W_θcᵀ δ_θ + p_ω ⊙ δ_ω) (2.124), or
  without the second term for `lstm` (2.125). The gates' own δ (2.22) would only be passed on to
  trainable units upstream of them, of which this network has none, so they are not formed.
- weight changes (2.24): ΔW = α δ_P ⊗ trace for the output units, the output gates and the cells,
  and α δ_c ⊙ E_ι, α δ_c ⊙ E_φ for the input and forget gates (G_j = {c_j}), all computed from the
  step's weights before any is changed.

How it was checked (tests/baselines/neural/test_lstm_g.py): on a canonical LSTM without peepholes, the summed LSTM-g
weight changes over a sequence (updates not applied) equal α times the negative gradient torch
autograd computes for the per-step cross-entropy when every previous-step activation reaching a
unit over a recurrent connection is detached and only the cells' self-connection carries ŝ_c
forward (the truncation eligibility traces compute, §2.4): the largest absolute difference is
1.4e-17 in float64 (with and without direct and delayed recurrent connections). With peepholes the
same holds for `lstm-g` (eq. 2.124's extra term is the truncated gradient's path over the output
gate's peephole), while `lstm` differs from it and equals a unit-by-unit transcription of eqs.
2.5-2.13 (to 7e-18). The numpy and torch dynamics agree; the 10-8-4 network has 416 weights.

Deviations and choices where the dissertation is silent: the cell's squashing function is the
logistic function, the example §2.2 gives ("such as the standard logistic function"; `tanh` is a
setting); peepholes carry the cell's squashed output f(s_c), as LSTM-g's Fig. 2.1(b) draws them
("proceeding normally from the output of the memory cell") and as eq. 2.124's f'(s_c) factor
implies, for both rules (the LSTM of §2.2 feeds s_c; both rules train the same network here, as in
Fig. 2.3); states, activations and traces are zero at the start of every sequence; the input
squashing function g is the identity (§2.2).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import torch
from scipy.special import expit
from torch import nn

from structbench.baselines.neural.lstm_g.settings import Architecture, Rule, Squash

FloatArray = npt.NDArray[np.float64]
INPUT, FORGET, OUTPUT = 0, 1, 2
"""Rows of the gate weight and peephole arrays."""


def squash(kind: Squash, state: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(state) if kind == "logistic" else torch.tanh(state)


class LstmNetwork(nn.Module):
    """The weights of one network (float64) and its activation dynamics, batched in torch."""

    gates: nn.Parameter
    cell: nn.Parameter
    peepholes: nn.Parameter | None
    out_cell: nn.Parameter
    out_direct: nn.Parameter | None

    def __init__(self, architecture: Architecture) -> None:
        super().__init__()
        self.architecture = a = architecture
        h = a.blocks

        def zeros(*shape: int) -> nn.Parameter:
            return nn.Parameter(torch.zeros(*shape, dtype=torch.float64))

        self.gates = zeros(3, h, a.sources)  # rows: input gate, forget gate, output gate
        self.cell = zeros(h, a.sources)
        self.peepholes = zeros(3, h) if a.peepholes else None
        self.out_cell = zeros(a.outputs, h)
        self.out_direct = zeros(a.outputs, a.inputs) if a.direct else None

    def initialise(self, rng: np.random.Generator, scale: float) -> None:
        """Every weight uniform in [-scale, scale) (Monner §2.7.1: [-0.1, 0.1)), drawn in parameter order."""
        with torch.no_grad():
            for parameter in self.parameters():
                values = rng.uniform(-scale, scale, size=tuple(parameter.shape))
                parameter.copy_(torch.from_numpy(values))

    def initial_state(self, batch: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(s_c, f(s_c), y_ω ⊙ f(s_c)) before a sequence: all zero."""
        zero = torch.zeros(batch, self.architecture.blocks, dtype=torch.float64)
        return zero, zero, zero

    def run(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        state: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
        truncate: bool = False,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """Output net inputs s_θ [B, T, K] for inputs [B, T, I], and the final state.

        Where `mask` [B, T] is False (padding after a shorter sequence) the state is carried
        unchanged. `truncate` detaches every previous-step activation that reaches a unit over a
        peephole or a recurrent connection, keeping only the cells' self-connection ŝ_c in the
        graph: the gradient eligibility traces compute (Monner §2.4). The input's contributions to
        every layer are computed for all steps at once; only the recurrence is stepped."""
        a = self.architecture
        batch, steps, width = x.shape
        s, y, h = state if state is not None else self.initial_state(batch)
        from_input = torch.einsum("ghi,bti->btgh", self.gates[:, :, :width], x)
        cell_from_input = x @ self.cell[:, :width].T
        gated = []
        for t in range(steps):
            if truncate:
                y, h = y.detach(), h.detach()
            net, cell_input = from_input[:, t], cell_from_input[:, t]
            if a.recurrent:
                net = net + torch.einsum("ghu,bu->bgh", self.gates[:, :, width:], h)
                cell_input = cell_input + h @ self.cell[:, width:].T
            net_i, net_f, net_o = net[:, INPUT], net[:, FORGET], net[:, OUTPUT]
            if self.peepholes is not None:
                net_i = net_i + self.peepholes[INPUT] * y
                net_f = net_f + self.peepholes[FORGET] * y
            s_new = torch.sigmoid(net_f) * s + torch.sigmoid(net_i) * cell_input
            y_new = squash(a.cell_squash, s_new)
            if self.peepholes is not None:
                net_o = net_o + self.peepholes[OUTPUT] * y_new
            h_new = torch.sigmoid(net_o) * y_new
            if mask is not None:
                keep = mask[:, t].unsqueeze(1)
                s_new, y_new, h_new = (
                    torch.where(keep, s_new, s),
                    torch.where(keep, y_new, y),
                    torch.where(keep, h_new, h),
                )
            s, y, h = s_new, y_new, h_new
            gated.append(h)
        out = torch.stack(gated, dim=1) @ self.out_cell.T
        if self.out_direct is not None:
            out = out + x @ self.out_direct.T
        return out, (s, y, h)


class LocalLearner:
    """Online training of an `LstmNetwork` by LSTM-g's local rule or the LSTM algorithm (see module doc).

    Works on numpy views of the network's parameters, so every update is the network's. `reset`
    before each sequence; `step` activates the layers in order (ι, φ, c, ω, θ), updates the
    eligibility traces and, given a target, changes the weights by α·(2.24) (`apply`) or adds the
    change to `pending` (weights held fixed, for tests)."""

    def __init__(self, net: LstmNetwork, alpha: float, rule: Rule = "lstm-g") -> None:
        self.architecture = a = net.architecture
        self.alpha = alpha
        self.rule = rule
        h = a.blocks
        self.gates = net.gates.detach().numpy()
        self.cell = net.cell.detach().numpy()
        self.peepholes = None if net.peepholes is None else net.peepholes.detach().numpy()
        self.out_cell = net.out_cell.detach().numpy()
        self.out_direct = None if net.out_direct is None else net.out_direct.detach().numpy()
        self.parameters: dict[str, FloatArray] = {"gates": self.gates, "cell": self.cell, "out_cell": self.out_cell}
        if self.peepholes is not None:
            self.parameters["peepholes"] = self.peepholes
        if self.out_direct is not None:
            self.parameters["out_direct"] = self.out_direct
        self.pending = {name: np.zeros_like(value) for name, value in self.parameters.items()}
        self._gate_rows = self.gates.reshape(3 * h, a.sources)
        self.state = np.zeros(h)
        self.activation = np.zeros(h)
        self.gated = np.zeros(h)
        self.cell_trace = np.zeros((h, a.sources))
        self.gate_trace = np.zeros((2, h, a.sources))
        self.peephole_trace = np.zeros((2, h))

    def reset(self) -> None:
        """Zero states, activations and (extended) eligibility traces: a new sequence."""
        for array in (self.state, self.activation, self.gated, self.cell_trace, self.gate_trace, self.peephole_trace):
            array.fill(0.0)

    def step(self, x: FloatArray, target: FloatArray | None, *, apply: bool = True) -> FloatArray:
        """Activate the network on input `x` [I]; with a `target` [K] in [0, 1], learn. Returns y_θ [K]."""
        a = self.architecture
        h = a.blocks
        u = np.concatenate((x, self.gated)) if a.recurrent else x
        previous_state, previous_activation = self.state, self.activation
        net = self._gate_rows @ u
        net_if = net[: 2 * h].reshape(2, h)
        if self.peepholes is not None:
            net_if = net_if + self.peepholes[:2] * previous_activation
        y_if = expit(net_if)  # rows: input gate, forget gate
        y_i, y_f = y_if[INPUT], y_if[FORGET]
        cell_input = self.cell @ u
        state = y_f * previous_state + y_i * cell_input  # (2.15) = (2.3)
        if a.cell_squash == "logistic":
            activation = expit(state)
            slope = activation * (1.0 - activation)
        else:
            activation = np.tanh(state)
            slope = 1.0 - activation * activation
        net_o = net[2 * h :]
        if self.peepholes is not None:
            net_o = net_o + self.peepholes[OUTPUT] * activation
        y_o = expit(net_o)
        gated = y_o * activation
        net_out = self.out_cell @ gated
        if self.out_direct is not None:
            net_out = net_out + self.out_direct @ x
        y: FloatArray = expit(net_out)

        # eligibility traces (2.17) of the cells, extended traces (2.18) of the input and forget gates
        self.cell_trace *= y_f[:, None]
        self.cell_trace += y_i[:, None] * u  # np.outer, without its per-call overhead
        gain = y_if * (1.0 - y_if)
        gain[INPUT] *= cell_input
        gain[FORGET] *= previous_state
        self.gate_trace *= y_f[None, :, None]
        self.gate_trace += gain[:, :, None] * u[None, None, :]
        self.peephole_trace *= y_f
        self.peephole_trace += gain * previous_activation
        self.state, self.activation, self.gated = state, activation, gated
        if target is None:
            return y

        # error responsibilities (2.10, 2.21-2.23) from this step's weights
        delta_out = target - y
        back = self.out_cell.T @ delta_out
        delta_o = y_o * (1.0 - y_o) * activation * back
        projected = y_o * back
        if self.rule == "lstm-g" and self.peepholes is not None:
            projected = projected + self.peepholes[OUTPUT] * delta_o  # (2.124)'s extra term; (2.125) lacks it
        delta_c = slope * projected

        # weight changes (2.24)
        alpha = self.alpha
        changes: dict[str, FloatArray] = {
            "out_cell": alpha * (delta_out[:, None] * gated),
            "cell": (alpha * delta_c)[:, None] * self.cell_trace,
        }
        gates = np.empty_like(self.gates)
        gates[:2] = (alpha * delta_c)[None, :, None] * self.gate_trace
        gates[OUTPUT] = alpha * (delta_o[:, None] * u)
        changes["gates"] = gates
        if self.peepholes is not None:
            peepholes = np.empty_like(self.peepholes)
            peepholes[:2] = alpha * delta_c * self.peephole_trace
            peepholes[OUTPUT] = alpha * delta_o * activation
            changes["peepholes"] = peepholes
        if self.out_direct is not None:
            changes["out_direct"] = alpha * (delta_out[:, None] * x)
        target_arrays = self.parameters if apply else self.pending
        for name, change in changes.items():
            target_arrays[name] += change
        return y
