package io.spraynic.dpdk;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * EAL lifecycle on real DPDK. Surefire forks one JVM per test class, so this class owns its
 * process's one {@code rte_eal_init}.
 */
class EalTest
{
    static final List<String> ARGUMENTS = List.of(
        "spraynic-test", "--no-huge", "-m", "256", "--no-pci", "-l", "0",
        "--file-prefix", "spraynic-eal-test-" + ProcessHandle.current().pid(), "--log-level", "lib.eal:notice");

    private static Eal eal;

    @BeforeAll
    static void initEal()
    {
        eal = Eal.init(ARGUMENTS);
    }

    @AfterAll
    static void closeEal()
    {
        eal.close();
    }

    @Test
    void shouldRefuseSecondInitWithClearError()
    {
        final IllegalStateException error = assertThrows(IllegalStateException.class, () -> Eal.init(ARGUMENTS));
        assertTrue(error.getMessage().contains("rte_eal_init runs once per process"), error.getMessage());
        assertSame(eal, Eal.current());
    }

    @Test
    void shouldKeepArguments()
    {
        assertEquals(ARGUMENTS, Eal.current().arguments());
        assertTrue(Eal.isRunning());
    }

    @Test
    void shouldRegisterPollThreadsAsDistinctLcores() throws Exception
    {
        final AtomicInteger first = new AtomicInteger(-100);
        final AtomicInteger again = new AtomicInteger(-100);
        final AtomicInteger second = new AtomicInteger(-100);
        final AtomicInteger before = new AtomicInteger(-100);
        final Thread one = new Thread(() ->
        {
            before.set(Shim.lcoreId());
            first.set(eal.registerCurrentThread());
            again.set(eal.registerCurrentThread());
            final Thread two = new Thread(() ->
            {
                second.set(eal.registerCurrentThread());
                eal.unregisterCurrentThread();
            });
            two.start();
            try
            {
                two.join();
            }
            catch (final InterruptedException ex)
            {
                throw new IllegalStateException(ex);
            }
            eal.unregisterCurrentThread();
        });
        one.start();
        one.join();

        assertEquals(Shim.LCORE_ID_ANY, before.get());
        assertTrue(first.get() > 0, "lcore id " + first.get());
        assertEquals(first.get(), again.get());
        assertTrue(second.get() > 0 && second.get() != first.get(), "second lcore id " + second.get());
    }

    @Test
    void shouldCarryDpdkMessageInErrors()
    {
        final DpdkException error = assertThrows(DpdkException.class, () -> EthPort.byName("no_such_port"));
        assertTrue(error.getMessage().contains("rte_eth_dev_get_port_by_name(no_such_port)"), error.getMessage());
        assertTrue(error.errno() > 0);
        assertEquals("Invalid argument", Eal.strerror(22));
    }

    @Test
    void shouldCreateAndRemoveVdevAtRunTime()
    {
        eal.createVdev("net_null7", "");
        final EthPort port = EthPort.byName("net_null7");
        assertEquals("net_null", port.info().driverName());
        port.close();
        eal.removeVdev("net_null7");
        assertThrows(DpdkException.class, () -> EthPort.byName("net_null7"));
    }

    @Test
    void shouldMeasureNoopDowncallBothWays()
    {
        assertEquals(42, Shim.noop(42));
        assertEquals(-7, io.spraynic.dpdk.generated.Dpdk.spraynic_noop(-7));
    }
}
