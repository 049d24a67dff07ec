package io.spraynic.bench.jmh;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.transport.spray.SprayHandshake;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.ProtectionDomain;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import javax.crypto.KeyAgreement;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * What setting up an authenticated spray connection costs (docs/PROTOCOL.md S9.1, S12.2), control path:
 * <ul>
 *   <li>{@code x25519KeyPair}, {@code x25519Agreement}: the JCA operations each end does once per connection
 *   (one key pair, one agreement);</li>
 *   <li>{@code handshake}: a whole set-up between two engines over an in-memory link in virtual time: CONNECT,
 *   RETRY with a cookie, CONNECT with the cookie, CONNECT_ACK (both ends' key pairs, agreements, HKDF, cookie
 *   HMACs, connection state), then both ends closed forcefully. Its time is the CPU cost per connection for the
 *   two ends together.</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class SprayHandshakeBenchmark
{
    private KeyPairGenerator generator;
    private KeyPair own;
    private KeyPair peer;
    private InMemoryLink link;
    private SprayEngine engineA;
    private SprayEngine engineB;
    private NicWorker agentA;
    private NicWorker agentB;
    private final CompletionQueue cq = new CompletionQueue(1024);
    private long now = 1_000_000;

    @Setup
    public void setUp() throws GeneralSecurityException
    {
        generator = KeyPairGenerator.getInstance("X25519");
        own = generator.generateKeyPair();
        peer = generator.generateKeyPair();
        link = new InMemoryLink("plane0", 4096, 2048);
        final PacketPort[] portsA = {link.first()};
        final PacketPort[] portsB = {link.second()};
        final PortFrameSink outputA = new PortFrameSink(portsA, 64);
        final PortFrameSink outputB = new PortFrameSink(portsB, 64);
        engineA = new SprayEngine(config(1), new ProtectionDomain(new SplittableRandom(1)), outputA);
        engineB = new SprayEngine(config(2), new ProtectionDomain(new SplittableRandom(2)), outputB);
        engineB.listen(connection(1), new SprayHandshake.PeerResolver()
        {
            public int ipv4(final int plane, final int plane0Ipv4)
            {
                return plane0Ipv4;
            }

            public long mac(final int plane, final int plane0Ipv4, final long plane0Mac)
            {
                return plane0Mac;
            }
        });
        agentA = NicWorker.builder().roleName("a").ports(portsA).spray(engineA, outputA).clock(() -> now).burst(32).build();
        agentB = NicWorker.builder().roleName("b").ports(portsB).spray(engineB, outputB).clock(() -> now).burst(32).build();
        agentA.onStart();
        agentB.onStart();
    }

    private static SprayConfig config(final int host)
    {
        return new SprayConfig().planes(1).local(0, 0x0A000000 | host, 0x020000000000L | host).maxConnections(4)
            .maxConnectionsPerSource(4);
    }

    private SprayConnectionConfig connection(final int remoteHost)
    {
        return new SprayConnectionConfig().paths(8).mtu(4096).streams(1).depths(64, 64, 64).placementChunks(64)
            .completionQueues(cq, cq).remote(0, 0x0A000000 | remoteHost, 0x020000000000L | remoteHost);
    }

    @TearDown
    public void tearDown()
    {
        agentA.onClose();
        agentB.onClose();
        link.close();
    }

    @Benchmark
    public KeyPair x25519KeyPair()
    {
        return generator.generateKeyPair();
    }

    @Benchmark
    public byte[] x25519Agreement() throws GeneralSecurityException
    {
        final KeyAgreement agreement = KeyAgreement.getInstance("X25519");
        agreement.init(own.getPrivate());
        agreement.doPhase(peer.getPublic(), true);
        return agreement.generateSecret();
    }

    @Benchmark
    public SprayConnection handshake()
    {
        final SprayHandshake.Pending p = engineA.connect(connection(2), now);
        for (int i = 0; i < 100 && p.state() == SprayHandshake.Pending.State.CONNECTING; i++)
        {
            now += 500;
            agentA.doWork();
            now += 500;
            agentB.doWork();
        }
        final SprayConnection c = p.connection();
        if (null == c)
        {
            throw new IllegalStateException("no connection: " + p.failure());
        }
        engineB.close(engineB.connection(c.remoteCid()));
        engineA.close(c);
        now += 3_000_000_000L; // past the closed CIDs' quarantine (2 x connectionTimeout), so it stays empty
        agentA.doWork();
        agentB.doWork();
        return c;
    }
}
