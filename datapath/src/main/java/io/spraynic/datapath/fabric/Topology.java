package io.spraynic.datapath.fabric;

/**
 * Builders of the fabrics experiments run on. Every plane is an independent network and host {@code h}'s
 * port {@code p} attaches to plane {@code p}, so a multi-plane fabric is several copies of one
 * topology sharing only the hosts. Links are named {@code p<plane>/<from>-><to>[#k]} (for
 * {@link Fabric#link(String)}), switches {@code p<plane>/<name>}.
 */
public final class Topology
{
    private Topology()
    {
    }

    /**
     * Two hosts; on each plane each host has its own switch, and the two switches are joined by
     * {@code parallelLinks} parallel links, over which ECMP spreads flows by UDP source port. So there are
     * {@code planes * parallelLinks} distinct paths between the hosts (the demo's default: 4 planes of 2,
     * 8 paths). Host {@code i}'s address on plane {@code p} is {@code 10.p.i.1}.
     * <pre>
     *   host0 --p0/host0->sw0-- p0/sw0 ==(parallelLinks)== p0/sw1 --p0/sw1->host1-- host1
     *         (one such chain per plane)
     * </pre>
     */
    public static Fabric backToBack(final FabricConfig config, final int planes, final int parallelLinks)
    {
        if (parallelLinks < 1 || parallelLinks > 1024)
        {
            throw new IllegalArgumentException("parallel links " + parallelLinks + " must be 1..1024");
        }
        final Fabric fabric = new Fabric(config, planes, 2);
        final FabricAddresses addresses = fabric.addressesForBuild();
        final Host[] hosts = {fabric.addHost("host0"), fabric.addHost("host1")};
        for (int p = 0; p < planes; p++)
        {
            final String plane = "p" + p + "/";
            final Switch[] switches = {fabric.addSwitch(plane + "sw0", p), fabric.addSwitch(plane + "sw1", p)};
            for (int i = 0; i < 2; i++)
            {
                addresses.assign(i, p, FabricAddresses.ipv4(p, i, 0), FabricAddresses.mac(p, i));
                attachHost(fabric, hosts[i], p, switches[i], plane + "host" + i, plane + "sw" + i);
                switches[i].route(addresses.ipv4Of(i, p), 0);
            }
            final int[][] across = new int[2][parallelLinks];
            for (int k = 0; k < parallelLinks; k++)
            {
                final Link forward = fabric.addLink(plane + "sw0->sw1#" + k, p, false);
                final Link backward = fabric.addLink(plane + "sw1->sw0#" + k, p, false);
                across[0][k] = switches[0].addPort(forward, backward);
                across[1][k] = switches[1].addPort(backward, forward);
            }
            switches[0].route(addresses.ipv4Of(1, p), across[0]);
            switches[1].route(addresses.ipv4Of(0, p), across[1]);
        }
        return fabric;
    }

    /**
     * A two-tier leaf-spine (Clos) fabric per plane, one link between each leaf and each spine.
     *
     * @see #twoTierClos(FabricConfig, int, int, int, int, int)
     */
    public static Fabric twoTierClos(
        final FabricConfig config,
        final int leaves,
        final int spinesPerPlane,
        final int hostsPerLeaf,
        final int planes)
    {
        return twoTierClos(config, leaves, spinesPerPlane, hostsPerLeaf, planes, 1);
    }

    /**
     * A two-tier leaf-spine (Clos) fabric per plane: {@code leaves} leaf switches, each with
     * {@code hostsPerLeaf} hosts below it and {@code linksPerSpine} links up to each of
     * {@code spinesPerPlane} spines. Host {@code h = leaf * hostsPerLeaf + i} has address
     * {@code 10.p.leaf.(i+1)} on plane {@code p}. A leaf routes its own hosts down and everything else up
     * over all its uplinks (ECMP); a spine routes each host to the links of its leaf.
     */
    public static Fabric twoTierClos(
        final FabricConfig config,
        final int leaves,
        final int spinesPerPlane,
        final int hostsPerLeaf,
        final int planes,
        final int linksPerSpine)
    {
        if (leaves < 1 || leaves > 256)
        {
            throw new IllegalArgumentException("leaves " + leaves + " must be 1..256");
        }
        if (hostsPerLeaf < 1 || hostsPerLeaf > 254)
        {
            throw new IllegalArgumentException("hosts per leaf " + hostsPerLeaf + " must be 1..254");
        }
        if (spinesPerPlane < 0 || spinesPerPlane > 256 || (leaves > 1 && spinesPerPlane == 0))
        {
            throw new IllegalArgumentException("spines per plane " + spinesPerPlane +
                " must be 1..256 (0 only with a single leaf)");
        }
        if (linksPerSpine < 1 || linksPerSpine > 64)
        {
            throw new IllegalArgumentException("links per leaf-spine pair " + linksPerSpine + " must be 1..64");
        }
        final Fabric fabric = new Fabric(config, planes, leaves * hostsPerLeaf);
        final FabricAddresses addresses = fabric.addressesForBuild();
        final Host[] hosts = new Host[leaves * hostsPerLeaf];
        for (int h = 0; h < hosts.length; h++)
        {
            hosts[h] = fabric.addHost("host" + h);
        }
        for (int p = 0; p < planes; p++)
        {
            final String plane = "p" + p + "/";
            final Switch[] leafSwitches = new Switch[leaves];
            for (int l = 0; l < leaves; l++)
            {
                leafSwitches[l] = fabric.addSwitch(plane + "leaf" + l, p);
                for (int i = 0; i < hostsPerLeaf; i++)
                {
                    final int h = l * hostsPerLeaf + i;
                    addresses.assign(h, p, FabricAddresses.ipv4(p, l, i), FabricAddresses.mac(p, h));
                    final int port = attachHost(fabric, hosts[h], p, leafSwitches[l], plane + "host" + h,
                        plane + "leaf" + l);
                    leafSwitches[l].route(addresses.ipv4Of(h, p), port);
                }
            }
            final int[][] uplinks = new int[leaves][spinesPerPlane * linksPerSpine];
            for (int s = 0; s < spinesPerPlane; s++)
            {
                final Switch spine = fabric.addSwitch(plane + "spine" + s, p);
                for (int l = 0; l < leaves; l++)
                {
                    final int[] down = new int[linksPerSpine];
                    for (int k = 0; k < linksPerSpine; k++)
                    {
                        final String suffix = linksPerSpine == 1 ? "" : "#" + k;
                        final Link up = fabric.addLink(plane + "leaf" + l + "->spine" + s + suffix, p, false);
                        final Link downLink = fabric.addLink(plane + "spine" + s + "->leaf" + l + suffix, p, false);
                        uplinks[l][s * linksPerSpine + k] = leafSwitches[l].addPort(up, downLink);
                        down[k] = spine.addPort(downLink, up);
                    }
                    for (int i = 0; i < hostsPerLeaf; i++)
                    {
                        spine.route(addresses.ipv4Of(l * hostsPerLeaf + i, p), down);
                    }
                }
            }
            if (spinesPerPlane > 0)
            {
                for (int l = 0; l < leaves; l++)
                {
                    leafSwitches[l].defaultRoute(uplinks[l]);
                }
            }
        }
        return fabric;
    }

    private static int attachHost(
        final Fabric fabric,
        final Host host,
        final int plane,
        final Switch sw,
        final String hostName,
        final String switchName)
    {
        final Link up = fabric.addLink(hostName + "->" + switchName.substring(switchName.indexOf('/') + 1), plane,
            true);
        final Link down = fabric.addLink(switchName + "->" + hostName.substring(hostName.indexOf('/') + 1), plane,
            true);
        final int port = sw.addPort(down, up);
        host.port(plane).connect(up, down);
        return port;
    }
}
