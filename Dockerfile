# syntax=docker/dockerfile:1
# ooda in a container: the binary, git, and nothing else. It reads and
# writes the repository mounted (or cloned) at /work and needs no network at
# run time beyond what the project's own skills and git remote use.
# docs/running.md, "Docker".
#
#   docker build -t ooda .
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/work" ooda cycle

# Kept equal to go.mod's go line (deploy/deploy_test.go checks it).
ARG GO_VERSION=1.26.8
ARG ALPINE_VERSION=3.22

FROM golang:${GO_VERSION}-alpine AS build
WORKDIR /src
# The modules first, so a source change does not download them again
# (third_party/ holds a patched module that go.mod replaces).
COPY go.mod go.sum ./
COPY third_party/ third_party/
RUN go mod download
COPY . .
# A release tag (v1.4.0) for `ooda version`; empty: "dev".
ARG VERSION=""
# Static, so the runtime image needs no C library of a given version;
# timetzdata embeds the time zones project.timezone may name.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -tags timetzdata \
      -ldflags "-s -w ${VERSION:+-X github.com/ooda-loop/ooda/internal/cli.Version=$VERSION}" \
      -o /out/ooda ./cmd/ooda

FROM alpine:${ALPINE_VERSION}
# git for the repository, ca-certificates for https remotes and the forge,
# openssh-client for ssh remotes. A fixed, numeric uid so Kubernetes'
# runAsNonRoot can verify it; a system-wide identity for the state commit,
# which a repository's or the user's own git configuration overrides.
RUN apk add --no-cache git ca-certificates openssh-client \
 && addgroup -S -g 10001 ooda \
 && adduser -S -D -H -u 10001 -G ooda -h /home/ooda -s /sbin/nologin ooda \
 && mkdir -p /home/ooda /work \
 && chown 10001:10001 /home/ooda /work \
 && git config --system user.name "ooda" \
 && git config --system user.email "ooda@localhost.invalid"
COPY --from=build /out/ooda /usr/local/bin/ooda
# One cycle, then push the loop's state commit: the Action's script, also
# used by the Kubernetes CronJob (deploy/kubernetes/).
COPY --chmod=0755 scripts/action/cycle.sh /usr/local/bin/ooda-cycle-push
LABEL org.opencontainers.image.title="ooda" \
      org.opencontainers.image.source="https://github.com/ooda-loop/ooda"
ENV HOME=/home/ooda
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["ooda"]
CMD ["cycle"]
