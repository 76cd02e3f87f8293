"""`prepare_groups` skips its passes over the pods when no pod names a group (`_none_grouped`): exactly when they
would find nothing, for every version and gate setting."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubefit.api.core import Pod
from kubefit.k8s.version import resolve
from kubefit.scheduler import podgroups

GROUP = st.none() | st.sampled_from(["g1", "g2", ""])
REF = st.none() | st.sampled_from([("w", "g", ""), ("w", "g", "r1")])
VERSIONS = ["1.34", "1.35", "1.36", "1.37"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(GROUP, REF, st.booleans(), st.integers(0, 2)), max_size=8), st.sampled_from(VERSIONS),
       st.booleans())
def test_the_shortcut_answers_as_the_passes(specs, minor, generic):
    pods = [Pod(name=f"p{i}", scheduling_group=group, workload_ref=ref, node_name="n" if bound else "",
                priority=priority) for i, (group, ref, bound, priority) in enumerate(specs)]
    want = all(p.scheduling_group is None and p.workload_ref is None for p in pods)
    assert podgroups._none_grouped(pods) is want
    if want:  # what the skipped passes would have found: nothing, and no pod changed
        version = resolve(minor, None if generic or minor == "1.34" else "GenericWorkload=false")
        gates = podgroups.WorkloadGates.of(version)
        given_pods = list(pods)
        assert podgroups._pod_references(pods, version, gates) == []
        assert podgroups._priority_notes(pods, version) == []
        assert all(a is b for a, b in zip(pods, given_pods, strict=True))


def test_an_unhashable_reference_leaves_it_to_the_passes():
    pod = Pod(name="p", workload_ref=["w", "g", ""])  # (a list: a Pod built in Python)
    assert podgroups._none_grouped([pod]) is False
