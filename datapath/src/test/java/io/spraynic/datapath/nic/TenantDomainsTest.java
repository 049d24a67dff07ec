package io.spraynic.datapath.nic;

import io.spraynic.datapath.verbs.ProtectionDomain;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

class TenantDomainsTest
{
    @Test
    void shouldMakeATenantsDomainOnFirstUseKeepItAndForgetItOnceEmpty()
    {
        final ProtectionDomain defaultDomain = new ProtectionDomain();
        final TenantDomains domains = new TenantDomains(defaultDomain);
        assertSame(defaultDomain, domains.get(0));
        final ProtectionDomain tenant = domains.get(7);
        assertSame(tenant, domains.get(7), "kept while it is used");
        assertNotSame(tenant, domains.get(8));
        assertEquals(2, domains.tenantCount());
        domains.release(7);
        domains.release(0); // the default one is never forgotten
        domains.release(99); // nor does an unknown one matter
        assertEquals(1, domains.tenantCount());
        assertSame(defaultDomain, domains.get(0));
        assertNotSame(tenant, domains.get(7), "a new one after it was forgotten");
    }
}
