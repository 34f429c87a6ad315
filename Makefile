# spaceport: every target installs what it needs first (npm ci behind a stamp file),
# and runs the project's own Node 22 from node_modules/.bin.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
NODE := node_modules/.bin/node
CLI := $(NODE) lib/cli/main.ts
# What serves requests runs with AsyncLocalStorage over AsyncContextFrame (Node 24's default):
# a request's async context then costs about a sixth less CPU. NODE_OPTIONS carries it to every
# process a target starts (tests, bench servers), not to npm, whose node may be older.
# NODE_COMPILE_CACHE keeps V8's compiled code on disk between starts: a start-up reads some 600
# modules, and compiles them once instead of every time.
# --no-allocation-site-pretenuring: with V8's allocation-site pretenuring, each document query
# left ~650 bytes of garbage in the old generation until the next full collection, most of it
# from pg's row parsing (RSS grew 0.6-7.4 % over the second 50,000 requests of `make bench`,
# as the collections fell); without it ~215 bytes, and 2.0-2.1 %.
# NODE_OPTIONS refuses this V8 flag, so it is an argument; the processes that serve for `make
# dev` and `make bench` get it from this one (process.execArgv).
SERVE := NODE_OPTIONS="--experimental-async-context-frame $$NODE_OPTIONS" NODE_COMPILE_CACHE=$(CURDIR)/node_modules/.cache/node-compile $(NODE) --no-allocation-site-pretenuring
# Biome's npm wrapper needs every platform's package in the lock file, and the registry here
# lacks most of them, so the Linux x64 binary is an optional dependency of its own.
BIOME := node_modules/@biomejs/cli-linux-x64/biome
STAMP := node_modules/.install-stamp

.PHONY: run dev chromium test test-stress check migrate migrate-contract distribute rollback migrate-status migration project tenant user token routes bench bench-compare

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

run: $(STAMP)
	$(SERVE) lib/main.ts

# Restarts on every change to lib/, a project or the expert configuration, losing no request.
dev: $(STAMP)
	@$(SERVE) lib/cli/dev.ts

# Every test (the service's and each project's own), or one project's: make test PROJECT=shop.
test: $(STAMP) chromium
	$(SERVE) lib/cli/with-database.ts -- $(NODE) lib/cli/run-tests.ts $(call given,PROJECT,--project) | $(NODE) test/summary.ts

# The /docs test drives Debian's Chromium: installed here when missing, where it can be (root with
# apt-get); elsewhere that test is skipped and counted (and fails under CI).
CHROMIUM := /usr/bin/chromium
chromium:
	@[ -x $(CHROMIUM) ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		echo "chromium: installing Debian's chromium with apt-get, for the /docs browser test (once)" >&2 && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium: not installed here; the /docs browser test will be skipped" >&2

# The heavy suites (test/stress/ and *.heavy.test.ts), one file at a time; about 20 minutes on 2 cores.
test-stress: $(STAMP)
	$(SERVE) lib/cli/with-database.ts -- ava --tap --config ava.stress.config.js | $(NODE) test/summary.ts

# The service, then every project of PROJECTS_DIR (routes, settings, handlers, tests), then lint.
check: $(STAMP)
	tsc --noEmit -p tsconfig.json
	@$(CLI) check-projects
	@if [ -x $(BIOME) ]; then $(BIOME) lint; else echo "check: no Biome binary for this platform; lint skipped" >&2; exit 1; fi

# Expand migrations (before the new release serves; instances also run them at start-up), contract
# migrations (once every instance runs it), and the list of both with their kind and state.
migrate migrate-contract migrate-status routes: $(STAMP)
	@$(CLI) $@

# A DBA's, on a migrated database whose server has Citus (docs/scaling.md): tenants a reference
# table, every tenant table distributed by tenant and co-located, what the workers need. Idempotent.
distribute: $(STAMP)
	@$(CLI) distribute

rollback: $(STAMP)
	@$(CLI) rollback

# make migration NAME=add_widgets [KIND=contract]: an empty migration of that kind (expand by default).
migration: $(STAMP)
	@$(CLI) migration $(call quote,$(value NAME)) $(call quote,$(or $(value KIND),expand))

# A new project in PROJECTS_DIR that passes its own tests and make check as it is.
project: $(STAMP)
	@$(CLI) project $(call quote,$(value NAME))

# Shell-quotes a value; `given` passes --flag=value only for a variable set on make's command
# line, so `make user ... SPACES=` (given, empty) clears a list while leaving SPACES out keeps it.
# `value` keeps a `$` in a password as typed.
quote = '$(subst ','\'',$(1))'
given = $(if $(filter command line,$(origin $(1))),$(2)=$(call quote,$(value $(1))))

tenant: $(STAMP)
	@$(CLI) tenant $(call quote,$(value NAME))

user: $(STAMP)
	@$(CLI) user $(call given,TENANT,--tenant) $(call given,USERNAME,--username) $(call given,PASSWORD,--password) \
		$(call given,ROLE,--role) $(call given,SPACES,--spaces) $(call given,SCHEMAS,--schemas)

token: $(STAMP)
	@$(CLI) token $(call given,TENANT,--tenant) $(call given,USERNAME,--username)

bench: $(STAMP)
	$(SERVE) bench/run.ts

# BASE=<revision>: its service and this tree's side by side, CPU per request in paired rounds (bench/README.md).
bench-compare: $(STAMP)
	BASE=$(call quote,$(value BASE)) $(SERVE) bench/compare.ts
