package io.spraynic.apps.exchange;

import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.InMemoryNicPair;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.MemoryRegion;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic deregister}'s request through the exchange directory, served as {@code spraynic nic} serves it: a
 * valid one deregisters the exposed region (a visit then fails with a remote access error), and every request a local
 * process could forge (another key, words, an oversized file, a link, a directory) is refused with the reason while
 * the region stays registered and served.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegionRevocationTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @AutoClose
    private InMemoryNicPair pair;

    private EmbeddedNic[] start()
    {
        pair = new InMemoryNicPair(dir, "revoke", (config, host) -> config.mode(NicConnection.Kind.SPRAY).workers(1)
            .connections(8, 4, 1024).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).listen(host == 1));
        return new EmbeddedNic[]{pair.nic(0), pair.nic(1)};
    }

    // the serving NIC's control loop, as spraynic nic runs it between its accepts; the answers it published
    private CompletableFuture<String> serving(final EmbeddedNic nic, final MemoryRegion region, final AtomicBoolean stop)
    {
        return CompletableFuture.supplyAsync(() ->
        {
            final StringBuilder answers = new StringBuilder();
            try
            {
                while (!stop.get())
                {
                    final String answer = RegionRevocation.serve(nic, region, dir);
                    if (null != answer)
                    {
                        answers.append(answer).append('\n');
                    }
                    Thread.sleep(5);
                }
            }
            catch (final Exception ex)
            {
                answers.append("threw ").append(ex);
            }
            return answers.toString();
        });
    }

    @Test
    void shouldDeregisterTheExposedRegionOnRequestAndRefuseTheVisitAfter() throws Exception
    {
        final EmbeddedNic[] nics = start();
        final MemoryRegion exposed = pair.expose(1, 1L << 20);
        PeerExchange.publishServer(nics[1], exposed, dir);
        // (a visit closes the visiting NIC when it ends: the one visit here is after the request)
        final AtomicBoolean stop = new AtomicBoolean();
        final CompletableFuture<String> served = serving(nics[1], exposed, stop);
        assertNull(RegionRevocation.request(dir, WAIT));
        assertFalse(exposed.isRegistered());
        assertFalse(Files.exists(dir.resolve(RegionRevocation.REQUEST)), "the request is taken");
        // nic.addr no longer offers the region: a visitor reading it now is told why, before it tries the wire
        final String addr = Files.readString(dir.resolve("nic.addr"));
        assertTrue(addr.endsWith(" deregistered=" + Integer.toUnsignedString(exposed.rkey())), addr);
        assertFalse(addr.contains("addr=" + exposed.address()) || addr.contains(" rkey="), addr);
        final IllegalStateException told = assertThrows(IllegalStateException.class,
            () -> PeerExchange.awaitServed(dir, 1, WAIT));
        assertEquals("the NIC serving " + dir + " deregistered the region it exposed (rkey " +
            Integer.toUnsignedString(exposed.rkey()) + "): there is nothing to visit", told.getMessage());
        assertEquals("the region is deregistered already", RegionRevocation.request(dir, WAIT), "asked twice");
        stop.set(true);
        assertEquals("deregistered rkey=" + Integer.toUnsignedString(exposed.rkey()) +
            "\nrefused: the region is deregistered already\n", served.get(10, TimeUnit.SECONDS));

        // a visitor that read nic.addr before (as a stale copy of it says) is refused on the wire
        PeerExchange.publishServer(nics[1], exposed, dir);
        final IllegalStateException visit = assertThrows(IllegalStateException.class,
            () -> PeerExchange.visit(nics[0], dir, 256 * 1024, 64 * 1024, WAIT));
        assertTrue(visit.getMessage().contains("REM_ACCESS_ERR"), visit.getMessage());
        Thread.sleep(200); // the visitor's writes in flight referenced memory visit() frees on its way out
        assertEquals(0, InMemoryNicPair.faults(nics[1]), "exceptions in the serving NIC's workers");
    }

    @Test
    void shouldRefuseEveryForgedRequestWithItsReasonAndKeepServing() throws Exception
    {
        final EmbeddedNic[] nics = start();
        final MemoryRegion exposed = pair.expose(1, 1L << 20);
        PeerExchange.publishServer(nics[1], exposed, dir);
        final Path request = dir.resolve(RegionRevocation.REQUEST);
        final String other = Integer.toUnsignedString(exposed.rkey() + 1);
        final Object[][] forged = {
            {"rkey=" + other, "rkey " + other + " is not the exposed region's"},
            {"please deregister", RegionRevocation.REQUEST + " says 'please deregister', not rkey=N"},
            {"rkey=4294967296", RegionRevocation.REQUEST + " names no 32-bit key: 'rkey=4294967296'"},
            {"rkey=-1", RegionRevocation.REQUEST + " names no 32-bit key: 'rkey=-1'"},
            {"rkey=\u0007\u001b[2J", RegionRevocation.REQUEST + " names no 32-bit key: 'rkey=??[2J'"},
            {"rkey=" + Integer.toUnsignedString(exposed.rkey()) + " ".repeat(RegionRevocation.MAX_REQUEST_BYTES),
                RegionRevocation.REQUEST + " holds more than " + RegionRevocation.MAX_REQUEST_BYTES + " bytes"},
        };
        for (final Object[] attempt : forged)
        {
            Files.writeString(request, (String)attempt[0]);
            final String answer = RegionRevocation.serve(nics[1], exposed, dir);
            assertEquals("refused: " + attempt[1], answer);
            assertFalse(RegionRevocation.deregistered(answer));
            assertEquals("refused: " + attempt[1], Files.readString(dir.resolve(RegionRevocation.ANSWER)));
            assertFalse(Files.exists(request), "taken, refused: " + attempt[0]);
        }
        // a link to the rightful request, and a directory: not regular files
        final Path rightful = Files.writeString(dir.resolve("elsewhere"), "rkey=" + Integer.toUnsignedString(exposed.rkey()));
        Files.createSymbolicLink(request, rightful);
        assertEquals("refused: " + RegionRevocation.REQUEST + " is not a regular file",
            RegionRevocation.serve(nics[1], exposed, dir));
        assertTrue(Files.exists(rightful), "the link went, not what it named");
        Files.createDirectory(request);
        assertEquals("refused: " + RegionRevocation.REQUEST + " is not a regular file",
            RegionRevocation.serve(nics[1], exposed, dir));
        assertNull(RegionRevocation.serve(nics[1], exposed, dir), "no request: nothing answered");
        // a request the NIC cannot take away (a directory with something in it): an I/O error, nothing deregistered
        Files.createDirectory(request);
        Files.writeString(request.resolve("inside"), "rkey=" + Integer.toUnsignedString(exposed.rkey()));
        assertThrows(java.nio.file.DirectoryNotEmptyException.class, () -> RegionRevocation.serve(nics[1], exposed, dir));
        Files.delete(request.resolve("inside"));
        assertEquals("refused: " + RegionRevocation.REQUEST + " is not a regular file",
            RegionRevocation.serve(nics[1], exposed, dir));

        // another user's request (in a sticky exchange directory, as /dev/shm, anyone can make the name): not the
        // operator's, whatever key it names
        if ("root".equals(System.getProperty("user.name")))
        {
            Files.writeString(request, "rkey=" + Integer.toUnsignedString(exposed.rkey()));
            assertEquals(0, new ProcessBuilder("chmod", "1777", dir.toString()).start().waitFor());
            try
            {
                assertEquals(0, new ProcessBuilder("chown", "65534", request.toString()).start().waitFor());
                final String stranger = RegionRevocation.serve(nics[1], exposed, dir);
                assertTrue(stranger.startsWith("refused: ") && stranger.contains("belongs to uid 65534"), stranger);
            }
            finally
            {
                assertEquals(0, new ProcessBuilder("chmod", "700", dir.toString()).start().waitFor());
            }
        }

        assertTrue(exposed.isRegistered());
        assertTrue(PeerExchange.visit(nics[0], dir, 256 * 1024, 64 * 1024, WAIT).verified(), "still served");
    }

    @Test
    void shouldSayWhenNoNicServesTheDirectory() throws Exception
    {
        final IllegalStateException none = assertThrows(IllegalStateException.class,
            () -> RegionRevocation.request(dir, Duration.ofMillis(100)));
        assertTrue(none.getMessage().startsWith("no nic.addr in " + dir), none.getMessage());
        Files.writeString(dir.resolve("nic.addr"), "planes=1 ip.0=10.0.0.2 addr=4096 rkey=7 length=65536");
        final IllegalStateException silent = assertThrows(IllegalStateException.class,
            () -> RegionRevocation.request(dir, Duration.ofMillis(100)));
        assertTrue(silent.getMessage().startsWith("no NIC answered the request to deregister rkey 7"),
            silent.getMessage());
        assertFalse(Files.exists(dir.resolve(RegionRevocation.REQUEST)), "a request nobody took is withdrawn");
    }
}
