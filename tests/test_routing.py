"""The harness's routing of disaggregated requests to decode replicas with a batch limit
(model/calculations/routing.py; docs/calibration-history.md, "Fourth pass: routing and large
batches").

InferenceX's multi-node runs go through srt-slurm: nginx in front of up to ten Dynamo
frontends (ishandhanani/srt-slurm src/srtctl/core/schema.py FrontendConfig:
enable_multiple_frontends true, num_additional_frontends 9; src/srtctl/cli/mixins/
frontend_stage.py), each `python3 -m dynamo.frontend` with the recipe's args (none in these
recipes), whose --router-mode defaults to round-robin (ai-dynamo/dynamo
components/frontend/src/dynamo/frontend/main.py). The replica a request reaches does not
depend on which replicas are full.

Data: tests/data/measured_blackwell_moe.csv (InferenceX DeepSeek-R1-0528 rows; the notes
cite each run's recipe).
"""

from __future__ import annotations

import csv
import heapq
import itertools
import random
from pathlib import Path

import pytest

from llmsizer.model.calculations.routing import random_routing_batch_per_replica
from llmsizer.sizing.fidelity import evaluate_file

MOE = Path(__file__).parent / "data" / "measured_blackwell_moe.csv"


@pytest.fixture(scope="module")
def disagg():
    got, _, _ = evaluate_file(MOE)
    return [r for r in got if r.point.disaggregated]


def _placements(users: int, replicas: int, limit: int) -> float:
    """E[min(n, limit)] for one replica, by enumerating every placement of the users."""
    total = 0
    for placed in itertools.product(range(replicas), repeat=users):
        total += min(placed.count(0), limit)
    return total / replicas**users


@pytest.mark.parametrize("users,replicas,limit", [(3, 3, 1), (4, 4, 2), (6, 3, 1), (5, 2, 2),
                                                  (7, 7, 1)])
def test_the_closed_form_is_the_expectation_over_every_placement(users, replicas, limit):
    got = random_routing_batch_per_replica(users / replicas, replicas, limit)
    assert got == pytest.approx(_placements(users, replicas, limit), rel=1e-9)


def test_no_routing_loss_without_a_limit_that_can_bind():
    assert random_routing_batch_per_replica(2.0, 3, 1024) == 2.0  # limit above all users
    assert random_routing_batch_per_replica(5.0, 1, 4) == 4.0  # one replica: its limit
    assert random_routing_batch_per_replica(3.0, 1, float("inf")) == 3.0


def _closed_loop(users: int, replicas: int, limit: int, requests: int = 20000,
                 seed: int = 7) -> float:
    """Mean busy slots of a closed loop: each user sends a request to a uniformly drawn
    replica; a replica decodes ``limit`` at a time, the rest wait in its queue; a request
    decodes for U[0.8, 1] (InferenceX's output lengths are U[0.8 L, L]), then its user sends
    the next one (the first token is small beside a 1k-token decode and is left out)."""
    rng = random.Random(seed)
    running = [0] * replicas
    queues: list[list[int]] = [[] for _ in range(replicas)]
    events: list[tuple[float, int, int]] = []  # (finish time, user, replica)

    def start(now: float, user: int) -> None:
        where = rng.randrange(replicas)
        if running[where] < limit:
            running[where] += 1
            heapq.heappush(events, (now + rng.uniform(0.8, 1.0), user, where))
        else:
            queues[where].append(user)

    for user in range(users):
        start(0.0, user)
    area = last = 0.0
    for _ in range(requests):
        now, user, where = heapq.heappop(events)
        area += sum(running) * (now - last)
        last = now
        running[where] -= 1
        if queues[where]:
            running[where] += 1
            heapq.heappush(events, (now + rng.uniform(0.8, 1.0), queues[where].pop(0), where))
        start(now, user)
    return area / last


@pytest.mark.parametrize("users,replicas,limit", [(3, 3, 1), (6, 5, 1), (7, 7, 1), (6, 3, 1),
                                                  (9, 3, 2), (4, 4, 2)])
def test_the_closed_form_against_a_simulated_closed_loop(users, replicas, limit):
    """The closed form counts the requests as placed independently; in the loop a request
    queued at a full replica stays there longer, so the loop keeps a few percent fewer
    slots busy (2.0 of 3 for 3 users on 3 one-slot replicas against the closed form's 2.11;
    the GB200 run kept 1.7)."""
    closed_form = random_routing_batch_per_replica(users / replicas, replicas, limit) * replicas
    simulated = _closed_loop(users, replicas, limit)
    assert simulated <= closed_form * 1.01
    assert closed_form <= simulated * 1.12


def _rows(label: str, conc: str, isl: str) -> dict[str, dict[str, str]]:
    with MOE.open(newline="") as f:
        return {r["metric"]: r for r in csv.DictReader(f) if r["tp"] == label
                and r["concurrency"] == conc and r["isl"] == isl}


def _busy(rows: dict[str, dict[str, str]], decode_gpus: int) -> float:
    """Sequences decoding in the run: its output tok/s (per decode GPU, InferenceX) x the
    decode GPUs x its mean TPOT."""
    return (float(rows["output_tokens_per_s_per_gpu"]["value"]) * decode_gpus
            * float(rows["tpot_ms"]["value"]) / 1000)


@pytest.mark.parametrize("label,conc,isl,decode_gpus,measured,before,now", [
    # GB200 FP8 1k/1k, recipe ctx1_gen3_tep8_batch1_eplb0_mtp0_3.yaml (InferenceX@d7dbd045b
    # nvidia-master.yaml dsr1-fp8-gb200-dynamo-trt): 3 users, 3 one-slot replicas
    ("DISAGG P:1x(TP8 EP8 ADP) D:3x(TP8 EP8)", "3", "1024", 24, 1.7, 0.65, 0.20),
    # GB200 FP4 1k/8k MTP, recipe ctx1_gen7_tep8_batch1_eplb0_mtp3.yaml (InferenceX@f316a0ef6
    # dsr1-fp4-gb200-dynamo-trt): 7 users, 7 one-slot replicas; -14.5 % (-6.3 % before its 3
    # drafts paid their fixed forward cost, docs/calibration-history.md "Fifth pass")
    ("DISAGG P:1x(TP4 EP4 ADP) D:7x(TP8 EP8)", "7", "1024", 56, 4.3, 0.42, 0.15),
])
def test_random_routing_fixes_the_small_runs(disagg, label, conc, isl, decode_gpus, measured,
                                             before, now):
    """Where the users about fill the slots, the runs keep fewer busy than the model did
    (it filled every slot: throughput +65 % and +42 %); with the routing 2.11 of 3 and 4.62
    of 7."""
    rows = _rows(label, conc, isl)
    assert _busy(rows, decode_gpus) == pytest.approx(measured, abs=0.1)
    got = next(r for r in disagg if r.point.raw["tp"] == label
               and r.point.concurrency == int(conc) and r.point.metric == "output_tokens_per_s")
    assert got.batch < 1.0  # per replica: 1 - (1 - 1/y)^n
    assert abs(got.error) < now < before


def test_random_routing_on_the_b200_batch1_runs(disagg):
    """B200 FP4 MTP, 1 prefill (TP4 EP4 ADP) + 5 decode workers (TP8 EP8) of batch 1, 6
    users, 1k/1k and 8k/1k (recipes 1k1k/mtp/ and 8k1k/mtp/ctx1_gen5_tep8_batch1_eplb0_mtp3
    .yaml in InferenceX@efe2f531c nvidia-master.yaml, dsr1-fp4-b200-dynamo-trt): both runs
    kept 3.4 of 5 slots busy; the closed form 3.69 (5 x (1 - 0.8^6)); the model was +46 % and
    +53 % filling all 5."""
    label = "DISAGG P:1x(TP4 EP4 ADP) D:5x(TP8 EP8)"
    got = [r for r in disagg if r.point.raw["tp"] == label and r.point.concurrency == 6
           and r.point.metric == "output_tokens_per_s"]
    assert len(got) == 2
    for r in got:
        assert r.batch * 5 == pytest.approx(5 * (1 - 0.8**6), rel=0.02)
        assert abs(r.error) < 0.15
