"""spreadConstraints selection (`SelectBestClusters`), hand-checked, and through `kubefit schedule`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubefit.cli import main
from kubefit.multicluster.divide import Candidate
from kubefit.multicluster.spread import SpreadError, select_best_clusters

DIVIDED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "karmada" / "samples-nginx"


def _cands() -> list[Candidate]:
    """The example in select_clusters_by_cluster.go's comment, in candidate order (score descending)."""
    return [Candidate("member1", 40, 40, score=60), Candidate("member2", 30, 30, score=50),
            Candidate("member3", 60, 60, score=40)]


def _names(cands: list[Candidate]) -> list[str]:
    return [c.name for c in cands]


def test_karmadas_own_example_swaps_member2_for_member3() -> None:
    """maxGroups 2, 80 replicas: member1+member2 hold 70 < 80, so member2 (the last kept) gives way to
    member3, the left-out cluster with the most AvailableReplicas above member2's 30."""
    placement = {"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 1}],
                 "replicaScheduling": DIVIDED}
    assert _names(select_best_clusters(_cands(), placement, 80)) == ["member1", "member3"]
    assert _names(select_best_clusters(_cands(), placement, 70)) == ["member1", "member2"]
    with pytest.raises(SpreadError, match="no enough resource when selecting 2 clusters"):
        select_best_clusters(_cands(), placement, 101)  # 40 + 60 is the most two clusters hold


def test_duplicated_ignores_capacity_and_min_groups_is_checked() -> None:
    placement = {"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 1}]}
    assert _names(select_best_clusters(_cands(), placement, 1000)) == ["member1", "member2"]
    placement["spreadConstraints"][0]["minGroups"] = 4
    with pytest.raises(SpreadError, match="less than spreadConstraint.MinGroups"):
        select_best_clusters(_cands(), placement, 1)


def test_static_weights_and_no_constraints_keep_every_candidate() -> None:
    static = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
              "weightPreference": {"staticWeightList": [{"targetCluster": {}, "weight": 1}]}}
    spread = [{"spreadByField": "cluster", "maxGroups": 1}]
    assert len(select_best_clusters(_cands(), {"spreadConstraints": spread, "replicaScheduling": static}, 5)) == 3
    assert len(select_best_clusters(_cands(), {}, 5)) == 3


def test_zone_alone_is_karmadas_error() -> None:
    with pytest.raises(SpreadError, match="just support cluster and region spread constraint"):
        select_best_clusters(_cands(), {"spreadConstraints": [{"spreadByField": "zone", "maxGroups": 1}],
                                        "replicaScheduling": DIVIDED}, 1)


def _policy_run(tmp_path: Path, capsys, spread: list[dict], regions: tuple[str, ...] = ("r1", "r1", "r1")
                ) -> tuple[int, str, str]:
    docs = [d for f in ("clusters.yaml", "deployment.yaml", "propagationpolicy.yaml")
            for d in yaml.safe_load_all((EXAMPLE / f).read_text()) if d]
    del docs[1]["spec"]["taints"]
    for cluster, region in zip(docs[:3], regions, strict=True):
        cluster["spec"]["region"] = region  # else the SpreadConstraint filter rejects them for a region spread
    placement = docs[-1]["spec"]["placement"]
    del placement["clusterAffinity"]
    placement.update({"spreadConstraints": spread, "replicaScheduling": DIVIDED})
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    rc = main(["schedule", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_schedule_keeps_max_groups_clusters(tmp_path, capsys) -> None:
    rc, out, _ = _policy_run(tmp_path, capsys, [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}])
    data = json.loads(out)
    assert rc == 0 and [c["name"] for c in data["candidates"]] == ["member1"]  # equal scores and capacity: name order
    assert data["replicas"] == {"member1": 2, "member2": 0, "member3": 0}


def test_region_spread_picks_the_region_with_more_clusters(tmp_path, capsys) -> None:
    """member1 and member3 in r1, member2 in r2, all scoring 0: one region of at least 1 cluster; both paths
    weigh 0, so the one holding more clusters (r1) wins; its best cluster (member1, by name) then member3
    up to the cluster constraint's maxGroups 2."""
    spread = [{"spreadByField": "region", "minGroups": 1, "maxGroups": 1},
              {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}]
    rc, out, _ = _policy_run(tmp_path, capsys, spread, regions=("r1", "r2", "r1"))
    data = json.loads(out)
    assert rc == 0 and [c["name"] for c in data["candidates"]] == ["member1", "member3"]
    assert data["replicas"] == {"member1": 2, "member2": 0, "member3": 0}


def test_zone_spread_on_clusters_without_zones_is_a_fit_error(tmp_path, capsys) -> None:
    rc, out, _ = _policy_run(tmp_path, capsys, [{"spreadByField": "zone", "maxGroups": 1}])
    assert rc == 1
    assert json.loads(out)["error"] == "0/3 clusters are available: 3 cluster(s) did not have zones property."
