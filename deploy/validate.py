#!/usr/bin/env python3
"""Checks Parley's deployment files without a cluster or a Docker engine.

- deploy/Dockerfile and .dockerignore: stages, build command, runtime user,
  entrypoint (structure only: no Docker engine runs here).
- deploy/docker-compose.yml: services, roles, depends_on, healthchecks,
  volumes, ports, PARLEY_* names.
- helm/parley: values.yaml and ci/*.yaml against values.schema.json
  (jsonschema); helm lint; rendering with the Helm engine (helm-python-sdk) for
  the default values, ci/cluster-values.yaml and an inline-credentials
  variant; every rendered manifest against the Kubernetes schemas
  (kubernetes-validate, strict); Helm's own schema check rejecting bad values.
- deploy/k8s: every plain manifest against the Kubernetes schemas.
- Rendered and plain manifests alike: probes, PARLEY_POD_NAME from the
  downward API, resources, security context, grace period, selectors,
  references to Secrets and ConfigMaps, PARLEY_* names known to
  shared/src/config/mod.rs.

Needs: pip install helm-python-sdk kubernetes-validate pyyaml jsonschema
Prints one line per check and ends with `deploy: N passed, M failed`; exits 1
when any check failed.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import tomllib
import traceback
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
CHART = ROOT / "helm" / "parley"
KUBE_VERSION = "1.30"
RELEASE = "parley"
NAMESPACE = "parley"
LEASE_TTL_SECS = 10
# Variables the containers may carry besides PARLEY_* ones.
OTHER_ENV = {"RUST_LOG"}
# What each cluster role cannot start without (shared/src/config/derived.rs require_cluster).
CLUSTER_ENV = {
    "PARLEY_DATABASE_URL",
    "PARLEY_NATS_URL",
    "PARLEY_REDIS_URL",
    "PARLEY_S3_ENDPOINT",
    "PARLEY_S3_BUCKET",
    "PARLEY_S3_ACCESS_KEY",
    "PARLEY_S3_SECRET_KEY",
}

try:
    import yaml
except ImportError:  # pragma: no cover - reported below
    yaml = None


class Failed(Exception):
    """A check's failure, with the lines that explain it."""

    def __init__(self, *problems: str):
        super().__init__("; ".join(problems))
        self.problems = list(problems)


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[tuple[str, list[str]]] = []

    def check(self, name: str, fn: Callable[[], str | None]) -> bool:
        """Runs one check; fn raises Failed (or anything) to fail, may return a detail."""
        try:
            detail = fn()
        except Failed as e:
            self._fail(name, e.problems)
            return False
        except Exception as e:  # a crash is a failure of that check, not of the run
            lines = [f"{type(e).__name__}: {e}"]
            lines += traceback.format_exc().strip().splitlines()[-3:-1]
            self._fail(name, lines)
            return False
        self.passed += 1
        print(f"ok    {name}" + (f" ({detail})" if detail else ""))
        return True

    def _fail(self, name: str, problems: list[str]) -> None:
        self.failed.append((name, problems))
        print(f"FAIL  {name}")
        for p in problems[:25]:
            print(f"        - {p}")
        if len(problems) > 25:
            print(f"        ... and {len(problems) - 25} more")


def need(condition: bool, problem: str, problems: list[str]) -> None:
    if not condition:
        problems.append(problem)


def raise_if(problems: list[str]) -> None:
    if problems:
        raise Failed(*problems)


# ---------------------------------------------------------------- repository facts


def workspace_version() -> str:
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    return cargo["workspace"]["package"]["version"]


def known_parley_names() -> set[str]:
    """PARLEY_* names from the KNOWN list in shared/src/config/mod.rs."""
    source = (ROOT / "shared" / "src" / "config" / "mod.rs").read_text()
    block = re.search(r"pub const KNOWN: &\[&str\] = &\[(.*?)\];", source, re.S)
    if not block:
        raise Failed("shared/src/config/mod.rs: KNOWN list not found")
    names = {f"PARLEY_{n}" for n in re.findall(r'"([A-Z0-9_]+)"', block.group(1))}
    if len(names) < 10:
        raise Failed(f"shared/src/config/mod.rs: only {len(names)} names found in KNOWN")
    return names


def exported_metrics() -> dict[str, str]:
    """Metric name (with the parley_ prefix) -> kind, from shared/src/metrics.rs."""
    source = (ROOT / "shared" / "src" / "metrics.rs").read_text()
    found = {f"parley_{name}": kind for kind, name in
             re.findall(r'\b(counter|counter_vec|gauge|histogram_vec)\(\s*&r,\s*"([a-z_]+)"', source)}
    found.update({f"parley_{name}": "gauge" for name in re.findall(r'Opts::new\(\s*"([a-z_]+)"', source)})
    if len(found) < 8:
        raise Failed(f"shared/src/metrics.rs: only {len(found)} metrics found")
    return found


def check_dashboard() -> str:
    """Every series the dashboard queries is exported, and every export is on it."""
    dashboard = json.loads((CHART / "dashboards" / "parley.json").read_text())
    exported = exported_metrics()
    problems: list[str] = []
    used: set[str] = set()
    for panel in dashboard.get("panels", []):
        targets = panel.get("targets") or []
        need(bool(targets), f"panel {panel.get('title')!r} has no query", problems)
        for target in targets:
            for name in re.findall(r"\bparley_[a-z_]+", target.get("expr", "")):
                base = re.sub(r"_(bucket|sum|count)$", "", name)
                if base in exported and (base == name or exported[base] == "histogram_vec"):
                    used.add(base)
                else:
                    problems.append(f"panel {panel.get('title')!r} queries {name}, which is not exported")
    for name in sorted(set(exported) - used):
        problems.append(f"{name} is exported but on no panel")
    raise_if(problems)
    return f"{len(dashboard['panels'])} panels, {len(used)} metrics"


# ---------------------------------------------------------------- Dockerfile


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    lines: list[str] = []
    current = ""
    for raw in path.read_text().splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        lines.append(current)
        current = ""
    out = []
    for line in lines:
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def check_dockerfile_build() -> str:
    ins = dockerfile_instructions(DEPLOY / "Dockerfile")
    problems: list[str] = []
    froms = [args for word, args in ins if word == "FROM"]
    need(len(froms) >= 2, f"expected a multi-stage build, found {len(froms)} FROM", problems)
    if froms:
        need(
            re.fullmatch(r"rust:1-bookworm\s+AS\s+builder", froms[0], re.I) is not None,
            f"first stage must be `rust:1-bookworm AS builder`, found `{froms[0]}`",
            problems,
        )
        need(
            froms[-1].split()[0] == "debian:bookworm-slim",
            f"runtime stage must be debian:bookworm-slim, found `{froms[-1]}`",
            problems,
        )
    runs = " ".join(args for word, args in ins if word == "RUN")
    need(
        "cargo build --release --locked --bin parley" in runs,
        "builder must run `cargo build --release --locked --bin parley`",
        problems,
    )
    copies = [args for word, args in ins if word == "COPY" and "--from=builder" in args]
    need(
        any("/usr/local/bin/parley" in c for c in copies),
        "runtime must COPY --from=builder the binary to /usr/local/bin/parley",
        problems,
    )
    raise_if(problems)
    return f"{len(froms)} stages"


def check_dockerfile_runtime() -> str:
    ins = dockerfile_instructions(DEPLOY / "Dockerfile")
    last_from = max(i for i, (word, _) in enumerate(ins) if word == "FROM")
    runtime = ins[last_from:]
    problems: list[str] = []

    def args_of(word: str) -> list[str]:
        return [args for w, args in runtime if w == word]

    installs = []
    for run in args_of("RUN"):
        for m in re.finditer(r"apt-get install ([^&;|]+)", run):
            installs += [t for t in m.group(1).split() if not t.startswith("-")]
    need(installs == ["ca-certificates"], f"runtime packages must be ca-certificates only, found {installs}", problems)
    users = args_of("USER")
    need(bool(users) and users[-1].split(":")[0] == "10001", f"runtime must run as USER 10001, found {users}", problems)
    need("useradd --uid 10001" in " ".join(args_of("RUN")), "runtime must create the uid 10001 user", problems)
    entry = args_of("ENTRYPOINT")
    need(
        bool(entry) and json.loads(entry[-1]) == ["/usr/local/bin/parley"],
        f'ENTRYPOINT must be ["/usr/local/bin/parley"], found {entry}',
        problems,
    )
    cmd = args_of("CMD")
    need(bool(cmd) and json.loads(cmd[-1]) == ["serve"], f'CMD must be ["serve"], found {cmd}', problems)
    need("8080" in " ".join(args_of("EXPOSE")).split(), "EXPOSE 8080 missing", problems)
    env = " ".join(args_of("ENV"))
    need("PARLEY_DATA_DIR=/data" in env, "ENV PARLEY_DATA_DIR=/data missing", problems)
    volumes = " ".join(args_of("VOLUME"))
    need("/data" in volumes, "VOLUME /data missing", problems)
    raise_if(problems)
    return "uid 10001, parley serve by default"


def check_dockerignore() -> None:
    path = ROOT / ".dockerignore"
    entries = {
        line.strip().rstrip("/")
        for line in path.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    missing = [e for e in ("target", ".git", "parley-data") if e not in entries]
    if missing:
        raise Failed(f".dockerignore lacks {missing}")


# ---------------------------------------------------------------- docker compose


def compose_default(value: Any) -> Any:
    """`${NAME:-default}` -> default (compose interpolation with the variable unset)."""
    if isinstance(value, str):
        return re.sub(r"\$\{[A-Z0-9_]+:?-([^}]*)\}", r"\1", value)
    return value


def compose_command(service: dict) -> list[str]:
    cmd = service.get("command", [])
    return cmd.split() if isinstance(cmd, str) else list(cmd)


def compose_env(service: dict) -> dict[str, str]:
    env = service.get("environment", {}) or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: str(compose_default(v)) for k, v in env.items()}


def check_compose(known: set[str]) -> str:
    doc = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    problems: list[str] = []
    for key in doc:
        need(key in {"name", "services", "volumes", "networks", "configs", "secrets"} or key.startswith("x-"),
             f"unknown top-level key {key!r}", problems)
    services: dict[str, dict] = doc.get("services") or {}
    volumes = set((doc.get("volumes") or {}).keys())
    images = {name: str(s.get("image", "")) for name, s in services.items()}

    def with_image(prefix: str) -> list[str]:
        return [n for n, i in images.items() if i.split(":")[0].endswith(prefix)]

    for what, prefix in [("PostgreSQL", "postgres"), ("Redis", "redis"), ("NATS", "nats")]:
        need(len(with_image(prefix)) == 1, f"expected one {what} service ({prefix} image)", problems)
    need(len(with_image("minio") + with_image("moto")) >= 1, "expected an S3-compatible service (minio or moto)", problems)
    for nats in with_image("nats"):
        need("-js" in compose_command(services[nats]) or "--jetstream" in compose_command(services[nats]),
             f"{nats}: NATS must run with JetStream (-js)", problems)

    roles: dict[str, list[str]] = {}
    for name, s in services.items():
        cmd = compose_command(s)
        if images[name].startswith("parley") and cmd:
            roles.setdefault(cmd[0], []).append(name)
    need(len(roles.get("api", [])) == 2, f"expected 2 API services, found {roles.get('api', [])}", problems)
    need(len(roles.get("worker", [])) == 3, f"expected 3 worker services, found {roles.get('worker', [])}", problems)
    need(len(roles.get("migrate", [])) == 1, f"expected one migrate service, found {roles.get('migrate', [])}", problems)
    pod_names = [compose_env(services[w]).get("PARLEY_POD_NAME") for w in roles.get("worker", [])]
    need(all(pod_names) and len(set(pod_names)) == len(pod_names),
         f"workers need distinct PARLEY_POD_NAME, found {pod_names}", problems)
    for m in roles.get("migrate", []):
        need(str(services[m].get("restart", "no")) == "no", f"{m}: a one-shot service must not restart", problems)

    conditions = {"service_started", "service_healthy", "service_completed_successfully"}
    for name, s in services.items():
        deps = s.get("depends_on", {}) or {}
        if isinstance(deps, list):
            deps = {d: {"condition": "service_started"} for d in deps}
        for dep, spec in deps.items():
            if dep not in services:
                problems.append(f"{name}: depends_on unknown service {dep!r}")
                continue
            cond = (spec or {}).get("condition", "service_started")
            need(cond in conditions, f"{name}: unknown depends_on condition {cond!r}", problems)
            hc = services[dep].get("healthcheck")
            if cond == "service_healthy":
                need(bool(hc) and not hc.get("disable"), f"{name}: waits for {dep} to be healthy, but {dep} has no healthcheck", problems)
        if name in roles.get("api", []) + roles.get("worker", []):
            need(deps.get(roles["migrate"][0] if roles.get("migrate") else "migrate", {}).get("condition")
                 == "service_completed_successfully",
                 f"{name}: must wait for migrate (service_completed_successfully)", problems)
            hc = s.get("healthcheck") or {}
            need(bool(hc.get("test")) and not hc.get("disable"), f"{name}: healthcheck missing", problems)
            env = compose_env(s)
            missing = sorted(CLUSTER_ENV - env.keys())
            need(not missing, f"{name}: cluster role lacks {missing}", problems)
            if name in roles.get("api", []):
                need(bool(env.get("PARLEY_ACCOUNT_TOKEN")), f"{name}: PARLEY_ACCOUNT_TOKEN missing", problems)
        for name_env in compose_env(s):
            if name_env.startswith("PARLEY_"):
                need(name_env in known, f"{name}: unknown setting {name_env}", problems)
        for vol in s.get("volumes", []) or []:
            source = vol.split(":")[0] if isinstance(vol, str) else vol.get("source", "")
            if source and not source.startswith((".", "/", "~")):
                need(source in volumes, f"{name}: volume {source!r} is not declared", problems)
        hc = s.get("healthcheck")
        if hc and not hc.get("disable"):
            test = hc.get("test")
            need(isinstance(test, list) and test and test[0] in {"CMD", "CMD-SHELL", "NONE"},
                 f"{name}: healthcheck test must be a list starting with CMD or CMD-SHELL", problems)
        build = s.get("build")
        if build:
            context = (DEPLOY / build.get("context", ".")).resolve()
            need((context / build.get("dockerfile", "Dockerfile")).is_file(),
                 f"{name}: build dockerfile not found from context {context}", problems)
    host_ports = []
    for name, s in services.items():
        for p in s.get("ports", []) or []:
            host_ports.append(str(p).split(":")[0] if ":" in str(p) else None)
    host_ports = [p for p in host_ports if p]
    dupes = sorted({p for p in host_ports if host_ports.count(p) > 1})
    need(not dupes, f"host ports used twice: {dupes}", problems)
    raise_if(problems)
    return f"{len(services)} services: 2 api, 3 workers, migrate once"


# ---------------------------------------------------------------- Kubernetes manifests


def kube_validate(doc: dict) -> None:
    import kubernetes_validate

    try:
        kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)
    except kubernetes_validate.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise Failed(f"{where}: {e.message}")
    except kubernetes_validate.SchemaNotFoundError as e:
        raise Failed(e.message)


def doc_name(doc: dict) -> str:
    return f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"


def pod_spec(doc: dict) -> dict | None:
    if doc.get("kind") in {"Deployment", "StatefulSet", "Job", "DaemonSet"}:
        return doc["spec"]["template"]["spec"]
    return None


def pod_labels(doc: dict) -> dict:
    return doc["spec"]["template"].get("metadata", {}).get("labels", {}) or {}


def parley_role(container: dict) -> str | None:
    args = container.get("args") or container.get("command") or []
    image = str(container.get("image", ""))
    if "parley" in image.split("/")[-1] and args and args[0] in {"api", "worker", "migrate", "serve"}:
        return args[0]
    return None


def selects(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_consistency(docs: list[dict], known: set[str], external_secrets: set[str], hooks: bool) -> str:
    """Cross-object checks on a set of manifests that are applied together."""
    problems: list[str] = []
    by_kind: dict[str, list[dict]] = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    secrets = {d["metadata"]["name"]: set((d.get("data") or {}).keys()) | set((d.get("stringData") or {}).keys())
               for d in by_kind.get("Secret", [])}
    configmaps = {d["metadata"]["name"]: d.get("data") or {} for d in by_kind.get("ConfigMap", [])}
    workloads = [d for d in docs if pod_spec(d) is not None]
    roles_seen: dict[str, dict] = {}

    for w in workloads:
        name = doc_name(w)
        spec = pod_spec(w)
        if w["kind"] in {"Deployment", "StatefulSet"}:
            need(selects(w["spec"]["selector"].get("matchLabels", {}), pod_labels(w)),
                 f"{name}: selector does not match the pod template labels", problems)
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            res = c.get("resources") or {}
            for part in ("requests", "limits"):
                for r in ("cpu", "memory"):
                    need(r in (res.get(part) or {}), f"{name}/{c['name']}: resources.{part}.{r} missing", problems)
            env_names: set[str] = set()
            for e in c.get("env", []) or []:
                env_names.add(e["name"])
                ref = (e.get("valueFrom") or {}).get("secretKeyRef")
                if ref:
                    if ref["name"] in secrets:
                        need(ref["key"] in secrets[ref["name"]],
                             f"{name}/{c['name']}: Secret {ref['name']} has no key {ref['key']!r}", problems)
                    else:
                        need(ref["name"] in external_secrets,
                             f"{name}/{c['name']}: Secret {ref['name']!r} is neither rendered nor an expected existing Secret",
                             problems)
                ref = (e.get("valueFrom") or {}).get("configMapKeyRef")
                if ref:
                    need(ref["name"] in configmaps and ref["key"] in configmaps[ref["name"]],
                         f"{name}/{c['name']}: ConfigMap key {ref['name']}/{ref['key']} missing", problems)
            for src in c.get("envFrom", []) or []:
                if "configMapRef" in src:
                    cm = src["configMapRef"]["name"]
                    if cm in configmaps:
                        env_names |= set(configmaps[cm].keys())
                    else:
                        problems.append(f"{name}/{c['name']}: ConfigMap {cm!r} not found")
                if "secretRef" in src:
                    need(src["secretRef"]["name"] in secrets or src["secretRef"]["name"] in external_secrets,
                         f"{name}/{c['name']}: Secret {src['secretRef']['name']!r} not found", problems)
            role = parley_role(c)
            if role is None:
                continue
            roles_seen[role] = w
            for env in env_names:
                if env.startswith("PARLEY_"):
                    need(env in known, f"{name}: unknown setting {env} (not in shared/src/config/mod.rs)", problems)
                else:
                    need(env in OTHER_ENV, f"{name}: unexpected variable {env}", problems)
            sc = c.get("securityContext") or {}
            psc = spec.get("securityContext") or {}
            need(psc.get("runAsNonRoot") is True or sc.get("runAsNonRoot") is True, f"{name}: runAsNonRoot not set", problems)
            need(sc.get("allowPrivilegeEscalation") is False, f"{name}: allowPrivilegeEscalation must be false", problems)
            need(sc.get("readOnlyRootFilesystem") is True, f"{name}: readOnlyRootFilesystem must be true", problems)
            if role == "migrate":
                need("PARLEY_DATABASE_URL" in env_names, f"{name}: PARLEY_DATABASE_URL missing", problems)
                continue
            missing = sorted(CLUSTER_ENV - env_names)
            need(not missing, f"{name}: the {role} role lacks {missing}", problems)
            if role == "api":
                need("PARLEY_ACCOUNT_TOKEN" in env_names, f"{name}: PARLEY_ACCOUNT_TOKEN missing", problems)
            pod = next((e for e in c.get("env", []) if e["name"] == "PARLEY_POD_NAME"), None)
            need(bool(pod) and ((pod.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == "metadata.name",
                 f"{name}: PARLEY_POD_NAME must come from metadata.name (downward API)", problems)
            ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
            need(ports.get("http") == 8080, f"{name}: container port http must be 8080 (PARLEY_BIND)", problems)
            need(ports.get("ops") == 9464, f"{name}: container port ops must be 9464 (PARLEY_OPS_BIND, /metrics)", problems)
            live = ((c.get("livenessProbe") or {}).get("httpGet") or {})
            ready = ((c.get("readinessProbe") or {}).get("httpGet") or {})
            need(live.get("path") == "/health/live", f"{name}: liveness probe must GET /health/live", problems)
            need(ready.get("path") == "/health/ready", f"{name}: readiness probe must GET /health/ready", problems)
            if role == "worker":
                need(w["kind"] == "StatefulSet", f"{name}: workers must be a StatefulSet", problems)
                grace = spec.get("terminationGracePeriodSeconds", 30)
                need(grace > LEASE_TTL_SECS,
                     f"{name}: terminationGracePeriodSeconds {grace} must exceed the handover and the {LEASE_TTL_SECS} s lease TTL",
                     problems)

    for role in ("api", "worker", "migrate"):
        need(role in roles_seen, f"no workload runs `parley {role}`", problems)
    if "worker" in roles_seen:
        sts = roles_seen["worker"]
        svc = next((s for s in by_kind.get("Service", []) if s["metadata"]["name"] == sts["spec"].get("serviceName")), None)
        need(svc is not None and svc["spec"].get("clusterIP") == "None",
             f"{doc_name(sts)}: serviceName must name a headless Service", problems)
    if "api" in roles_seen:
        need(roles_seen["api"]["kind"] == "Deployment", "the API must be a Deployment", problems)
    if "migrate" in roles_seen:
        job = roles_seen["migrate"]
        need(job["kind"] == "Job", "migrations must run as a Job", problems)
        if hooks:
            hook = (job["metadata"].get("annotations") or {}).get("helm.sh/hook", "")
            need("pre-upgrade" in hook and ("pre-install" in hook or "post-install" in hook),
                 f"migration Job must be a pre-install/pre-upgrade hook, found {hook!r}", problems)

    templates = [pod_labels(w) for w in workloads]
    for svc in by_kind.get("Service", []):
        sel = svc["spec"].get("selector") or {}
        need(any(selects(sel, t) for t in templates), f"{doc_name(svc)}: selector matches no pod template", problems)
        for p in svc["spec"].get("ports", []):
            tp = p.get("targetPort")
            need(tp not in ("ops", 9464) and p.get("port") != 9464,
                 f"{doc_name(svc)}: exposes the operations port (/metrics stays off Services)", problems)
            if isinstance(tp, str):
                owners = [w for w in workloads if selects(sel, pod_labels(w))]
                need(any(any(cp.get("name") == tp for c in pod_spec(w)["containers"] for cp in c.get("ports", []))
                         for w in owners),
                     f"{doc_name(svc)}: targetPort {tp!r} is no container port name", problems)
    for pdb in by_kind.get("PodDisruptionBudget", []):
        sel = pdb["spec"]["selector"].get("matchLabels", {})
        need(any(selects(sel, t) for t in templates), f"{doc_name(pdb)}: selector matches no pods", problems)
    for hpa in by_kind.get("HorizontalPodAutoscaler", []):
        ref = hpa["spec"]["scaleTargetRef"]
        target = next((d for d in docs if d["kind"] == ref["kind"] and d["metadata"]["name"] == ref["name"]), None)
        need(target is not None, f"{doc_name(hpa)}: scale target {ref['kind']}/{ref['name']} not found", problems)
        if target is not None:
            need("replicas" not in target["spec"],
                 f"{doc_name(hpa)}: {doc_name(target)} sets replicas, which fights the HPA", problems)
    for ing in by_kind.get("Ingress", []):
        for rule in ing["spec"].get("rules", []):
            for path in rule.get("http", {}).get("paths", []):
                svc = path["backend"]["service"]["name"]
                need(any(s["metadata"]["name"] == svc for s in by_kind.get("Service", [])),
                     f"{doc_name(ing)}: backend Service {svc!r} not found", problems)
    pdb_targets = {r for r in ("api", "worker") if r in roles_seen and any(
        selects(p["spec"]["selector"].get("matchLabels", {}), pod_labels(roles_seen[r]))
        for p in by_kind.get("PodDisruptionBudget", []))}
    need(pdb_targets == {"api", "worker"} & roles_seen.keys(), f"PodDisruptionBudgets cover only {sorted(pdb_targets)}", problems)
    raise_if(problems)
    kinds = ", ".join(f"{len(v)} {k}" for k, v in sorted(by_kind.items()))
    return kinds


def load_documents(text: str, origin: str) -> list[dict]:
    docs = []
    for doc in yaml.safe_load_all(text):
        if doc is None:
            continue
        if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
            raise Failed(f"{origin}: a document without kind/apiVersion")
        docs.append(doc)
    return docs


# ---------------------------------------------------------------- Helm


def deep_merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def main() -> int:
    report = Report()
    if yaml is None:
        print("FAIL  PyYAML is not installed (pip install pyyaml)")
        print("deploy: 0 passed, 1 failed")
        return 1

    facts: dict[str, Any] = {}

    def load_facts() -> str:
        facts["version"] = workspace_version()
        facts["known"] = known_parley_names()
        return f"version {facts['version']}, {len(facts['known'])} PARLEY_* names"

    if not report.check("repository facts (Cargo.toml version, shared/src/config/mod.rs names)", load_facts):
        facts.setdefault("version", "?")
        facts.setdefault("known", set())
    known: set[str] = facts["known"]
    version: str = facts["version"]

    # Dockerfile and compose: structure (no Docker engine here).
    report.check("Dockerfile: multi-stage release build", check_dockerfile_build)
    report.check("Dockerfile: runtime image", check_dockerfile_runtime)
    report.check(".dockerignore", check_dockerignore)
    report.check("docker-compose.yml: local cluster", lambda: check_compose(known))

    # values.yaml and ci values against values.schema.json, independently of Helm.
    def jsonschema_validator():
        import jsonschema

        schema = json.loads((CHART / "values.schema.json").read_text())
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)

    def check_values_file(path: Path) -> Callable[[], str]:
        def run() -> str:
            validator = jsonschema_validator()
            values = yaml.safe_load(path.read_text()) or {}
            if path.name != "values.yaml":
                values = deep_merge(yaml.safe_load((CHART / "values.yaml").read_text()), values)
            errors = sorted(validator.iter_errors(values), key=lambda e: list(e.absolute_path))
            if errors:
                raise Failed(*[f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors])
            return "valid"
        return run

    report.check("values.schema.json is a valid JSON schema", lambda: (jsonschema_validator(), None)[1])
    value_files = [CHART / "values.yaml"] + sorted((CHART / "ci").glob("*.yaml"))
    for path in value_files:
        report.check(f"jsonschema: {path.relative_to(ROOT)}", check_values_file(path))

    def check_schema_rejects_with_jsonschema() -> str:
        validator = jsonschema_validator()
        base = yaml.safe_load((CHART / "values.yaml").read_text())
        for bad in ({"workers": {"replicas": "three"}}, {"api": {"replica": 3}}, {"config": {"network": "pigeon"}}):
            if not list(validator.iter_errors(deep_merge(base, bad))):
                raise Failed(f"values {bad} pass the schema")
        return "wrong type, unknown key, bad enum"

    report.check("jsonschema rejects bad values", check_schema_rejects_with_jsonschema)

    # The Helm engine.
    helm = None

    def load_helm() -> str:
        nonlocal helm
        import helm_python

        helm = helm_python
        return f"helm-python-sdk {helm_python.__version__}, Helm {helm_python.helm_sdk_version()}"

    helm_ok = report.check("Helm engine (helm-python-sdk) loads", load_helm)
    if not helm_ok:
        print("        Helm rendering checks cannot run: pip install helm-python-sdk")

    def check_chart_metadata() -> str:
        meta = yaml.safe_load((CHART / "Chart.yaml").read_text())
        problems = []
        need(meta.get("apiVersion") == "v2", "Chart.yaml apiVersion must be v2", problems)
        need(str(meta.get("appVersion")) == version,
             f"appVersion {meta.get('appVersion')!r} differs from the workspace version {version!r}", problems)
        need(re.fullmatch(r"\d+\.\d+\.\d+([-+].*)?", str(meta.get("version", ""))) is not None,
             "chart version must be SemVer", problems)
        raise_if(problems)
        return f"appVersion {meta['appVersion']}"

    report.check("Chart.yaml", check_chart_metadata)
    report.check("grafana dashboard: metric names", check_dashboard)

    cluster_values = yaml.safe_load((CHART / "ci" / "cluster-values.yaml").read_text())
    # Cluster values with every credential inline instead of existingSecret.
    inline_values = deep_merge(cluster_values, {
        "auth": {"existingSecret": "", "accountToken": "example-token-0123456789"},
        "postgresql": {"existingSecret": "", "url": "postgres://parley:pw@db.example.com:5432/parley"},
        "s3": {"existingSecret": "", "accessKey": "example-key", "secretKey": "example-secret"},
        "api": {"autoscaling": {"enabled": False}, "replicas": 4},
        "ingress": {"enabled": False},
    })
    cases: list[tuple[str, dict | None, set[str]]] = [
        ("default values", None, set()),
        ("ci/cluster-values.yaml", cluster_values, {"parley-credentials", "registry-credentials"}),
        ("cluster values, inline credentials", inline_values, {"registry-credentials"}),
    ]

    if helm is not None:
        chart = helm.Chart.load(str(CHART))

        for label, values, external in cases:
            rendered: dict[str, str] = {}

            def lint() -> str:
                result = helm.lint(str(CHART), values, strict=True, kube_version=f"v{KUBE_VERSION}.0")
                bad = [f"{m['path']}: {m['error'].strip()}" for m in result.get("messages", []) if m["severity"] >= 2]
                raise_if(bad + [e.strip() for e in result.get("errors", []) if e.strip() not in " ".join(bad)])
                return "no warnings"

            report.check(f"helm lint ({label})", lint)

            def render() -> str:
                out = chart.render(values=values, name=RELEASE, namespace=NAMESPACE, is_install=True)
                rendered.update(out)
                return f"{sum(1 for k, v in out.items() if v.strip() and not k.endswith('NOTES.txt'))} templates with output"

            if not report.check(f"helm render ({label})", render):
                continue
            docs: list[dict] = []
            notes = ""
            for path, text in sorted(rendered.items()):
                if path.endswith("NOTES.txt"):
                    notes = text
                    continue
                for doc in load_documents(text, path):
                    docs.append(doc)
            for doc in docs:
                report.check(f"k8s {KUBE_VERSION} schema ({label}): {doc_name(doc)}",
                             lambda doc=doc: kube_validate(doc))
            report.check(f"manifest consistency ({label})",
                         lambda docs=docs, external=external: check_consistency(docs, known, external, hooks=True))

            def check_notes(notes: str = notes) -> None:
                problems = []
                need("port-forward" in notes or "://" in notes, "NOTES.txt does not say how to reach the API", problems)
                need("get secret" in notes and "base64 -d" in notes, "NOTES.txt does not say how to get the token", problems)
                raise_if(problems)

            report.check(f"NOTES.txt ({label})", check_notes)

        def check_render_rejects(values: dict, expect: str, error_class: str) -> Callable[[], str]:
            def run() -> str:
                try:
                    chart.render(values=values, name=RELEASE, namespace=NAMESPACE)
                except helm.HelmError as e:
                    message = str(e).strip().replace("\n", " ")
                    if type(e).__name__ != error_class or expect not in message:
                        raise Failed(f"rejected, but with {type(e).__name__}: {message}")
                    return message[-90:]
                raise Failed(f"Helm rendered values {values} without complaint")
            return run

        report.check("Helm schema check rejects workers.replicas: \"three\"",
                     check_render_rejects({"workers": {"replicas": "three"}}, "/workers/replicas", "HelmValuesError"))
        report.check("Helm schema check rejects a misspelt key (api.replica)",
                     check_render_rejects({"api": {"replica": 3}}, "replica", "HelmValuesError"))
        report.check("chart refuses a database with no source",
                     check_render_rejects({"postgresql": {"enabled": False}}, "postgresql", "HelmRenderError"))
        report.check("chart refuses bundled and external S3 at once",
                     check_render_rejects({"s3": {"endpoint": "https://s3.example.com"}}, "s3", "HelmRenderError"))

    # Plain manifests.
    plain_docs: list[dict] = []
    k8s_dir = DEPLOY / "k8s"
    manifest_files = sorted(p for p in k8s_dir.glob("*.yaml") if p.name != "kustomization.yaml")
    for path in manifest_files:
        def load(path: Path = path) -> str:
            docs = load_documents(path.read_text(), path.name)
            plain_docs.extend(docs)
            return ", ".join(doc_name(d) for d in docs)

        if not report.check(f"parse deploy/k8s/{path.name}", load):
            continue
    for doc in plain_docs:
        report.check(f"k8s {KUBE_VERSION} schema (deploy/k8s): {doc_name(doc)}", lambda doc=doc: kube_validate(doc))

    def check_plain_extras() -> str:
        problems = []
        for d in plain_docs:
            need("namespace" not in d.get("metadata", {}), f"{doc_name(d)}: sets a namespace", problems)
            spec = pod_spec(d)
            for c in (spec or {}).get("containers", []):
                if parley_role(c):
                    tag = str(c["image"]).rpartition(":")[2]
                    need(tag == version, f"{doc_name(d)}: image tag {tag} differs from the version {version}", problems)
        kustomization = yaml.safe_load((k8s_dir / "kustomization.yaml").read_text())
        listed = set(kustomization.get("resources", []))
        files = {p.name for p in manifest_files}
        need(listed == files, f"kustomization resources {sorted(listed)} differ from the files {sorted(files)}", problems)
        raise_if(problems)
        return "namespace-agnostic, image tag = workspace version, kustomization complete"

    report.check("deploy/k8s: namespace, image, kustomization", check_plain_extras)
    report.check("manifest consistency (deploy/k8s)",
                 lambda: check_consistency(plain_docs, known, set(), hooks=False))

    print()
    if report.failed:
        print("Failed checks:")
        for name, problems in report.failed:
            print(f"  {name}: {problems[0] if problems else ''}")
    print(f"deploy: {report.passed} passed, {len(report.failed)} failed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
