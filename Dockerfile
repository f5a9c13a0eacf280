# Feedback service: build the TypeScript in one stage, install production
# dependencies in another, and run the compiled output as the non-root `node`
# user in a slim runtime stage without compilers.

# Node 22: the active LTS (Node 20's support has ended).
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- base: toolchain for native addons -------------------------------------
FROM ${NODE_IMAGE} AS base
WORKDIR /app
# better-sqlite3 installs with `prebuild-install || node-gyp rebuild`; when no
# prebuilt binary fits, node-gyp compiles it and needs python3, make and g++,
# which the slim image does not have.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./

# ---- build: all dependencies, compile to dist/ -----------------------------
FROM base AS build
RUN npm ci
COPY . .
RUN npm run build

# ---- prod-deps: production dependencies only --------------------------------
# Installed here (same base image as the runtime, with the toolchain) so the
# native addons are built for the runtime's Node ABI and glibc.
FROM base AS prod-deps
RUN npm ci --omit=dev

# ---- runtime ----------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app

# The only place the service writes. A new named volume mounted here starts
# with this directory's contents and ownership, so `node` can write to it.
RUN mkdir -p /data && chown node:node /data

# Application files stay owned by root (read-only for `node`).
# package.json is needed at run time: it declares "type": "module".
COPY package.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

USER node
VOLUME ["/data"]
EXPOSE 3000

# The image has no curl: use Node's global fetch. 127.0.0.1 rather than
# localhost, which may resolve to ::1 while the server listens on IPv4.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["node", "dist/src/main.js"]
