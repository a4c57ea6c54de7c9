# The licentia image: a static binary on distroless/static (CA certificates,
# /etc/passwd with the nonroot user, no shell, no package manager).
#
#   docker build -t licentia \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg BUILT=$(git log -1 --format=%cI) .
#   docker run -p 8080:8080 -v licentia-data:/data licentia
#
# It needs BuildKit (Docker 20.10 or later; the default builder since 23.0)
# for the RUN --mount caches. There is no "# syntax=" line: that would fetch
# the Dockerfile frontend from a registry at every build, and the frontend
# built into Docker 20.10 and later reads this file as it is.
#
# GO_IMAGE and RUN_IMAGE name the base images. CI, whose machines reach no
# image registry, sets them to stand-ins made from local files and builds and
# starts this image (scripts/container-check.sh); cmd/licentia/container_test.go
# also starts the program with this entry point and environment outside a
# container, on every go test.
ARG GO_IMAGE=golang:1.26
ARG RUN_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
ARG BUILT=""
# .git is not in the build context (.dockerignore), so the version comes
# from the build arguments rather than from Go's version control stamp.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/licentia/licentia/internal/build.version=${VERSION} -X github.com/licentia/licentia/internal/build.commit=${COMMIT} -X github.com/licentia/licentia/internal/build.built=${BUILT}" \
      -o /out/licentia ./cmd/licentia \
 && mkdir -p /out/data

FROM ${RUN_IMAGE}
COPY --from=build /out/licentia /licentia
# The data directory belongs to the nonroot user (65532), so a new volume
# mounted there is writable: the SQLite database and a generated master key.
COPY --from=build --chown=65532:65532 /out/data /data
ENV LICENTIA_LISTEN=0.0.0.0:8080 \
    LICENTIA_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
USER nonroot:nonroot
# No shell or curl in the image: the binary checks itself (GET /readyz over
# loopback, exit 0 on 200).
HEALTHCHECK --interval=15s --timeout=6s --start-period=20s --retries=3 CMD ["/licentia", "healthcheck"]
ENTRYPOINT ["/licentia"]
CMD ["serve"]
