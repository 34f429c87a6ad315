import { entryOf } from '../values/map-entry.ts';

/** A second call does nothing. */
export type ShareRelease = () => void;

/** How a wait for a share ended: for the metrics, which count tenants by class, never by name. */
export type ShareWaitOutcome = 'granted' | 'refused';

/** What the pool's own statements (the tenants table, start-up checks) are counted as: no tenant's. */
export type ShareClass = 'tenant' | 'service';

export interface TenantSharesOptions {
  /** `limits.tenantConnections`. */
  perTenant: number;
  /** `limits.queueMs`. */
  queueMs: number;
  /** Told of every wait for a share, once it ends (not of a share taken at once). */
  onWait?: (shareClass: ShareClass, outcome: ShareWaitOutcome, seconds: number) => void;
}

export interface ShareCounts {
  readonly tenantsAtShare: number;
  readonly shareWaiting: number;
}

interface Waiter {
  readonly grant: () => void;
  readonly refuse: (error: Error) => void;
}

interface Share {
  inUse: number;
  readonly waiting: Waiter[];
}

/** The database answers, but no connection came free in time: a 503 the service answers itself, whoever's code met it. */
export class DatabaseBusy extends Error {
  readonly status = 503;
  readonly expose = true;
  readonly headers = { 'Retry-After': '1' };
}

/** 503 for that tenant alone, while the others' statements go ahead (SPEC §17.2). */
export class TenantShareBusy extends DatabaseBusy {
  override name = 'TenantShareBusy';
  constructor(perTenant: number, queueMs: number) {
    super(`too many database statements of this tenant at once: its ${perTenant} connections (limits.tenantConnections) stayed busy for ${queueMs} ms (limits.queueMs)`);
  }
}

/** SPEC §17.2: a statement over its tenant's share waits in that tenant's own queue, so one tenant's load never starves another. */
export class TenantShares {
  readonly #perTenant: number;
  readonly #queueMs: number;
  readonly #onWait: TenantSharesOptions['onWait'];
  readonly #shares = new Map<string, Share>();

  constructor({ perTenant, queueMs, onWait }: TenantSharesOptions) {
    if (!Number.isInteger(perTenant) || perTenant < 1) throw new RangeError(`a tenant's share of the pool must be a whole number of connections, at least 1 (got ${perTenant})`);
    this.#perTenant = perTenant;
    this.#queueMs = queueMs;
    this.#onWait = onWait;
  }

  take(tenant: string): ShareRelease | Promise<ShareRelease> {
    const share = entryOf(this.#shares, tenant, () => ({ inUse: 0, waiting: [] }));
    if (share.inUse < this.#perTenant && share.waiting.length === 0) {
      share.inUse += 1;
      return this.#releaseOf(tenant, share);
    }
    return this.#wait(tenant, share);
  }

  counts(): ShareCounts {
    let tenantsAtShare = 0;
    let shareWaiting = 0;
    for (const [tenant, share] of this.#shares) {
      if (tenant !== '' && share.inUse >= this.#perTenant) tenantsAtShare += 1;
      shareWaiting += share.waiting.length;
    }
    return { tenantsAtShare, shareWaiting };
  }

  /** When the database stopped answering one of `tenant`'s statements (SPEC §7: 503 within 2 s); it proves nothing of other tenants'. */
  refuseWaiting(tenant: string, error: Error): void {
    const share = this.#shares.get(tenant);
    if (share !== undefined) for (const waiter of [...share.waiting]) waiter.refuse(error);
  }

  #wait(tenant: string, share: Share): Promise<ShareRelease> {
    const started = performance.now();
    const shareClass: ShareClass = tenant === '' ? 'service' : 'tenant';
    return new Promise((resolve, reject) => {
      const waited = () => (performance.now() - started) / 1000;
      const leave = () => {
        clearTimeout(timer);
        const place = share.waiting.indexOf(waiter);
        if (place !== -1) share.waiting.splice(place, 1);
        this.#forgetIfUnused(tenant, share);
      };
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          share.inUse += 1;
          this.#onWait?.(shareClass, 'granted', waited());
          resolve(this.#releaseOf(tenant, share));
        },
        refuse: (error) => {
          leave();
          this.#onWait?.(shareClass, 'refused', waited());
          reject(error);
        },
      };
      const timer = setTimeout(() => waiter.refuse(new TenantShareBusy(this.#perTenant, this.#queueMs)), this.#queueMs);
      share.waiting.push(waiter);
    });
  }

  #releaseOf(tenant: string, share: Share): ShareRelease {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      share.inUse -= 1;
      const next = share.waiting.shift();
      if (next !== undefined) next.grant();
      else this.#forgetIfUnused(tenant, share);
    };
  }

  /** Only tenants with a statement under way are kept: the map never grows with the number of tenants seen. */
  #forgetIfUnused(tenant: string, share: Share): void {
    if (share.inUse === 0 && share.waiting.length === 0 && this.#shares.get(tenant) === share) this.#shares.delete(tenant);
  }
}
