package io.spraynic.datapath.nic;

import io.spraynic.datapath.verbs.ProtectionDomain;
import org.agrona.collections.Int2ObjectHashMap;

import java.security.SecureRandom;

/**
 * A {@link NicWorker}'s protection domains: its default one (0) and one per tenant (an IPC client), made on first use
 * and forgotten once they hold no region. Worker thread only; control path (a domain is looked up when a connection or
 * region is attached, not per packet).
 */
final class TenantDomains
{
    private static final SecureRandom TENANT_KEYS = new SecureRandom();

    private final ProtectionDomain defaultDomain;
    private final Int2ObjectHashMap<ProtectionDomain> tenants = new Int2ObjectHashMap<>();

    /** @param defaultDomain domain 0. */
    TenantDomains(final ProtectionDomain defaultDomain)
    {
        this.defaultDomain = defaultDomain;
    }

    /** @return the domain of tenant {@code domain}, made on first use; 0 is the default. */
    ProtectionDomain get(final int domain)
    {
        if (0 == domain)
        {
            return defaultDomain;
        }
        ProtectionDomain d = tenants.get(domain);
        if (null == d)
        {
            d = new ProtectionDomain(domain, TENANT_KEYS); // registerWithKeys: the keys come from the NIC's control domain
            tenants.put(domain, d);
        }
        return d;
    }

    /** @return the domain of tenant {@code domain} if made, else null; 0 is the default. */
    ProtectionDomain find(final int domain)
    {
        return 0 == domain ? defaultDomain : tenants.get(domain);
    }

    /** Forgets tenant {@code domain}'s domain once it holds no region. */
    void release(final int domain)
    {
        final ProtectionDomain d = tenants.get(domain);
        if (null != d && d.isEmpty())
        {
            tenants.remove(domain);
        }
    }

    /** @return tenant domains held now (the default one not counted). */
    int tenantCount()
    {
        return tenants.size();
    }
}
