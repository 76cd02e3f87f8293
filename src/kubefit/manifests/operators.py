"""Custom resources that make pods kubefit does not create: the operators' kinds, as data, and a heuristic.

kubefit runs no operator: the pods an operator creates for its custom resources (through the StatefulSets,
Deployments, DaemonSets and Jobs it makes) are missing from a scenario unless given. Such objects are named
in one warning (in the text output and in `-o json` `warnings`), never among the objects that place no pod:

- `OPERATORS`: API group → the kinds its operator turns into pods, each entry naming the operator's source (its
  repository, where the controller that makes the workload lives); add an entry to extend it;
- `CREATES`: for the kinds whose pods follow from their spec, what the operator will create (`3 PostgreSQL
  instance pods cluster-example-1 … cluster-example-3 (spec.instances)`), each with the operator's default;
- `workload_shaped`: any other custom resource whose spec looks like a workload (`replicas`, a pod template
  `template.spec.containers`, `containers`, or `resources` with requests or limits, in its spec up to three
  levels down) is named with the same warning, as one an operator probably turns into pods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubefit.manifests.kinds import api_group, custom_resource


@dataclass(frozen=True)
class Operator:
    """The kinds of one API group an operator turns into pods, and where that operator's source is."""

    group: str
    kinds: frozenset[str]
    source: str


def _op(group: str, kinds: str, source: str) -> Operator:
    return Operator(group, frozenset(kinds.split()), source)


OPERATORS: tuple[Operator, ...] = (
    _op("monitoring.coreos.com", "Prometheus PrometheusAgent Alertmanager ThanosRuler",
        "github.com/prometheus-operator/prometheus-operator pkg/prometheus, pkg/alertmanager, pkg/thanos (StatefulSets)"),
    _op("elasticsearch.k8s.elastic.co", "Elasticsearch", "github.com/elastic/cloud-on-k8s pkg/controller/elasticsearch"),
    _op("kibana.k8s.elastic.co", "Kibana", "github.com/elastic/cloud-on-k8s pkg/controller/kibana"),
    _op("kafka.strimzi.io", "Kafka KafkaNodePool KafkaConnect KafkaMirrorMaker KafkaMirrorMaker2 KafkaBridge",
        "github.com/strimzi/strimzi-kafka-operator cluster-operator"),
    _op("postgresql.cnpg.io", "Cluster Pooler", "github.com/cloudnative-pg/cloudnative-pg internal/controller"),
    _op("acid.zalan.do", "postgresql", "github.com/zalando/postgres-operator pkg/cluster"),
    _op("argoproj.io", "Rollout Workflow CronWorkflow ArgoCD EventSource Sensor",
        "github.com/argoproj/argo-rollouts, argo-workflows, argocd-operator, argo-events"),
    _op("ray.io", "RayCluster RayJob RayService", "github.com/ray-project/kuberay ray-operator/controllers"),
    _op("kubeflow.org", "PyTorchJob TFJob MPIJob XGBoostJob PaddleJob Notebook Experiment",
        "github.com/kubeflow/training-operator, kubeflow/kubeflow, kubeflow/katib"),
    _op("trainer.kubeflow.org", "TrainJob", "github.com/kubeflow/trainer pkg/controller"),
    _op("serving.kserve.io", "InferenceService LLMInferenceService", "github.com/kserve/kserve pkg/controller"),
    _op("serving.knative.dev", "Service Configuration Revision", "github.com/knative/serving pkg/reconciler"),
    _op("jobset.x-k8s.io", "JobSet", "github.com/kubernetes-sigs/jobset pkg/controllers"),
    _op("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "github.com/kubernetes-sigs/lws pkg/controllers"),
    _op("workload.codeflare.dev", "AppWrapper", "github.com/project-codeflare/appwrapper internal/controller"),
    _op("batch.volcano.sh", "Job", "github.com/volcano-sh/volcano pkg/controllers/job"),
    _op("apps.kruise.io", "CloneSet StatefulSet DaemonSet", "github.com/openkruise/kruise pkg/controller"),
    _op("rabbitmq.com", "RabbitmqCluster", "github.com/rabbitmq/cluster-operator controllers"),
    _op("minio.min.io", "Tenant", "github.com/minio/operator pkg/controller"),
    _op("opentelemetry.io", "OpenTelemetryCollector", "github.com/open-telemetry/opentelemetry-operator controllers"),
    _op("jaegertracing.io", "Jaeger", "github.com/jaegertracing/jaeger-operator pkg/controller/jaeger"),
    _op("sparkoperator.k8s.io", "SparkApplication ScheduledSparkApplication",
        "github.com/kubeflow/spark-operator internal/controller"),
    _op("flink.apache.org", "FlinkDeployment", "github.com/apache/flink-kubernetes-operator"),
    _op("nvidia.com", "ClusterPolicy NVIDIADriver", "github.com/NVIDIA/gpu-operator controllers (DaemonSets)"),
    _op("nfd.k8s-sigs.io", "NodeFeatureDiscovery", "github.com/kubernetes-sigs/node-feature-discovery-operator"),
    _op("kubevirt.io", "VirtualMachine VirtualMachineInstance", "github.com/kubevirt/kubevirt pkg/virt-controller"),
    _op("tekton.dev", "TaskRun PipelineRun", "github.com/tektoncd/pipeline pkg/reconciler/taskrun (a pod per TaskRun)"),
    _op("operator.tekton.dev", "TektonConfig TektonPipeline TektonTrigger TektonDashboard TektonChain TektonResult",
        "github.com/tektoncd/operator pkg/reconciler/kubernetes (the components' Deployments)"),
    _op("keda.sh", "ScaledJob", "github.com/kedacore/keda controllers/keda (Jobs)"),
    _op("grafana.integreatly.org", "Grafana", "github.com/grafana/grafana-operator controllers"),
    _op("mongodbcommunity.mongodb.com", "MongoDBCommunity", "github.com/mongodb/mongodb-kubernetes-operator controllers"),
    _op("clickhouse.altinity.com", "ClickHouseInstallation", "github.com/Altinity/clickhouse-operator pkg/controller"),
    _op("k8s.mariadb.com", "MariaDB", "github.com/mariadb-operator/mariadb-operator internal/controller"),
    _op("operator.tigera.io", "Installation APIServer Goldmane Whisker", "github.com/tigera/operator pkg/controller"),
    _op("install.istio.io", "IstioOperator", "github.com/istio/istio operator"),
    _op("sailoperator.io", "Istio IstioCNI ZTunnel", "github.com/istio-ecosystem/sail-operator controllers"),
    _op("ceph.rook.io", "CephCluster CephFilesystem CephObjectStore CephNFS CephFilesystemMirror CephRBDMirror",
        "github.com/rook/rook pkg/operator/ceph (mon, mgr, osd, mds, rgw, nfs, mirror Deployments)"),
    _op("csi.ceph.io", "Driver",
        "github.com/ceph/ceph-csi-operator internal/controller/driver_controller.go (a Deployment and a DaemonSet)"),
    _op("kubernetes.dask.org", "DaskCluster DaskJob", "github.com/dask/dask-kubernetes dask_kubernetes/operator"),
    _op("cassandra.datastax.com", "CassandraDatacenter", "github.com/k8ssandra/cass-operator"),
    _op("k8ssandra.io", "K8ssandraCluster", "github.com/k8ssandra/k8ssandra-operator controllers"),
    _op("pxc.percona.com", "PerconaXtraDBCluster", "github.com/percona/percona-xtradb-cluster-operator"),
    _op("psmdb.percona.com", "PerconaServerMongoDB", "github.com/percona/percona-server-mongodb-operator"),
    _op("pgv2.percona.com", "PerconaPGCluster", "github.com/percona/percona-postgresql-operator"),
    _op("mysql.oracle.com", "InnoDBCluster", "github.com/mysql/mysql-operator"),
    _op("pingcap.com", "TidbCluster", "github.com/pingcap/tidb-operator pkg/controller"),
    _op("redis.redis.opstreelabs.in", "Redis RedisCluster RedisReplication RedisSentinel",
        "github.com/OT-CONTAINER-KIT/redis-operator controllers"),
    _op("logging.banzaicloud.io", "Logging", "github.com/kube-logging/logging-operator controllers"),
    _op("fluentbit.fluent.io", "FluentBit", "github.com/fluent/fluent-operator controllers (a DaemonSet)"),
)


def _number(spec: dict[str, Any], field: str, default: int) -> tuple[int, str]:
    """An integer count of the spec (its default when absent or not an integer), with where it came from."""
    value = spec.get(field)
    if isinstance(value, int) and not isinstance(value, bool):
        return value, f"spec.{field}"
    return default, f"spec.{field} defaults to {default}"


def _ordinals(name: str, count: int, first: int) -> str:
    """`db-0 … db-2` (`first` the first ordinal), `db-0` or nothing."""
    if count <= 0:
        return ""
    last = first + count - 1
    return f", {name}-{first}" + (f" … {name}-{last}" if count > 1 else "")


def _pods(field: str = "replicas", default: int = 1, what: str = "pods of its spec.template",
          first: int | None = None) -> Callable[[str, dict[str, Any]], str]:
    """What a kind creates: `spec.<field>` (or its default) pods, named by ordinal from `first` when given."""
    def creates(name: str, spec: dict[str, Any]) -> str:
        count, source = _number(spec, field, default)
        named = "" if first is None else _ordinals(name, count, first)
        return f"{count} {what}{named} ({source})"
    return creates


def _daemon(_name: str, _spec: dict[str, Any]) -> str:
    return "a pod of its spec.template on each node it selects, as a DaemonSet"


def _knative(_name: str, spec: dict[str, Any]) -> str:
    """Knative Serving (pkg/reconciler/revision/resources/deploy.go; config-autoscaler `initial-scale: "1"`): the
    latest Revision's Deployment, started at its initial scale, each pod the template's containers plus the
    `queue-proxy` sidecar; the autoscaler then follows the requests (to zero when idle, unless min-scale)."""
    template = spec.get("template") if isinstance(spec.get("template"), dict) else spec
    annotations = ((template.get("metadata") or {}).get("annotations") or {}) if isinstance(template, dict) else {}
    scale = annotations.get("autoscaling.knative.dev/initial-scale") if isinstance(annotations, dict) else None
    count = f"{scale} pod(s) (autoscaling.knative.dev/initial-scale)" if scale is not None else \
        "1 pod (Knative's default initial scale)"
    return (f"a Deployment of its Revision: {count} of its template's containers plus Knative's queue-proxy "
            f"sidecar, then as many as its requests need (none when idle)")


# (group, kind) → what the operator creates for an object, from its name and spec (each with the operator's default).
CREATES: dict[tuple[str, str], Callable[[str, dict[str, Any]], str]] = {
    # openkruise/kruise apis/apps/defaults (replicas default 1); Advanced StatefulSet names pods as a StatefulSet
    ("apps.kruise.io", "CloneSet"): _pods(),
    ("apps.kruise.io", "StatefulSet"): _pods(first=0),
    ("apps.kruise.io", "DaemonSet"): _daemon,
    ("serving.knative.dev", "Service"): _knative,
    ("serving.knative.dev", "Configuration"): _knative,
    ("serving.knative.dev", "Revision"): _knative,
    # cloudnative-pg api/v1 cluster_types.go (`instances`, default 1; pods <cluster>-1, -2, ... each with its PVC)
    ("postgresql.cnpg.io", "Cluster"): _pods("instances", 1, "PostgreSQL instance pods", first=1),
    ("postgresql.cnpg.io", "Pooler"): _pods("instances", 1, "PgBouncer pods"),
    # prometheus-operator: a StatefulSet per shard of spec.replicas (default 1) pods
    ("monitoring.coreos.com", "Alertmanager"): _pods(what="Alertmanager pods"),
    ("monitoring.coreos.com", "Prometheus"): _pods(what="Prometheus pods per shard"),
}


def creates(doc: Any) -> str | None:
    """What the operator will create for this custom resource (None: the table does not know)."""
    describe = CREATES.get((api_group(doc.body), doc.kind))
    spec = doc.body.get("spec")
    return None if describe is None else describe(doc.name, spec if isinstance(spec, dict) else {})


OPERATOR_KINDS: dict[str, frozenset[str]] = {}
for _entry in OPERATORS:
    OPERATOR_KINDS[_entry.group] = OPERATOR_KINDS.get(_entry.group, frozenset()) | _entry.kinds


def operator_managed(doc: Any) -> bool:
    """A custom resource of a known operator that turns it into pods (`OPERATORS`)."""
    return doc.kind in OPERATOR_KINDS.get(api_group(doc.body), ())


WORKLOAD_KEYS = ("replicas", "template", "containers", "resources")


def _workload_field(node: Any, depth: int) -> str | None:
    """The first field of a spec that looks like a workload's, searched breadth first up to `depth` levels."""
    if not isinstance(node, dict) or depth <= 0:
        return None
    if isinstance(node.get("replicas"), int) and not isinstance(node.get("replicas"), bool):
        return "replicas"
    template = node.get("template")
    if isinstance(template, dict) and isinstance((template.get("spec") or {}).get("containers"), list):
        return "template.spec.containers"
    if isinstance(node.get("containers"), list):
        return "containers"
    resources = node.get("resources")
    if isinstance(resources, dict) and any(isinstance(resources.get(k), dict) for k in ("requests", "limits")):
        return "resources"
    for key, value in node.items():
        found = _workload_field(value, depth - 1)
        if found is not None:
            return f"{key}.{found}"
    return None


def workload_shaped(doc: Any) -> str | None:
    """For a custom resource of no known operator: the spec field that makes it look like a workload (None:
    nothing does)."""
    if operator_managed(doc) or not custom_resource(doc.body):
        return None
    found = _workload_field(doc.body.get("spec"), 3)
    return None if found is None else f"spec.{found}"


def makes_pods(doc: Any) -> bool:
    """Named in `operator_note` rather than among the objects that place no pod."""
    return operator_managed(doc) or workload_shaped(doc) is not None


def operator_note(docs: list[Any]) -> str | None:
    """The warning for custom resources that make pods kubefit does not create (None when there are none)."""
    named = []
    for d in docs:
        if operator_managed(d):
            what = creates(d)
            named.append(f"{d.label} ({d.body.get('apiVersion')}{'' if what is None else ': ' + what})")
        elif (shape := workload_shaped(d)) is not None:
            named.append(f"{d.label} ({d.body.get('apiVersion')}; its {shape} looks like a workload's)")
    if not named:
        return None
    more = f" and {len(named) - 4} more" if len(named) > 4 else ""
    return (f"{', '.join(named[:4])}{more}: an operator turns these custom resources into pods (StatefulSets, "
            f"Deployments, DaemonSets, Jobs it creates); kubefit runs no operator, so those pods are missing here: "
            f"add them (or a snapshot of the running cluster) to count them")
