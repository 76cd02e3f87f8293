# kubefit in a container, for teams without Python in CI: `docker build -t kubefit .` then
#   docker run --rm -v "$PWD:/work" -w /work kubefit check -f cluster/ --expect kubefit-check.yaml
# (a git baseline such as --baseline origin/main needs the repository mounted and git, which the image has).
# Two stages: the wheel is built with a compiler and libyaml's headers (the compiled row kernels and streaming
# reader, setup.py), the image keeps only the runtime (libyaml, git) and the installed wheel.
FROM python:3.12-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev libyaml-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps -w /wheels . \
    && python -m venv /opt/kubefit && /opt/kubefit/bin/pip install --no-cache-dir /wheels/kubefit-*.whl

FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends libyaml-0-2 git \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/kubefit /opt/kubefit
ENV PATH=/opt/kubefit/bin:$PATH
# the compiled parts are there (a build without them would be slower, with the same answers)
RUN python -c "import kubefit.scheduler._rowkernels, kubefit.manifests._reader" \
    && git config --system --add safe.directory '*'
WORKDIR /work
ENTRYPOINT ["kubefit"]
CMD ["--help"]
