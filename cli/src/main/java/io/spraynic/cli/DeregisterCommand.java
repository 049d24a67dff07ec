package io.spraynic.cli;

import io.spraynic.apps.exchange.RegionRevocation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * {@code spraynic deregister}: takes away the region a running {@code spraynic nic --expose --exchange DIR} serves,
 * without stopping it. Exit 0 once the NIC deregistered it (every worker: nothing is read from it or placed into it
 * after), 1 with the NIC's reason when it refused, 2 when no NIC answered.
 */
@Command(name = "deregister", mixinStandardHelpOptions = true,
    description = "Deregister the region a running spraynic nic --expose serves (named in DIR/nic.addr): peers' WRITEs " +
        "and READs of it are refused from then on, a READ response under way included (PROTOCOL.md S9.3.2).")
final class DeregisterCommand implements Callable<Integer>
{
    @Option(names = "--exchange", required = true, paramLabel = "DIR",
        description = "The NIC's exchange directory (spraynic nic --exchange DIR).")
    Path exchange;

    @Option(names = "--timeout", defaultValue = "10", paramLabel = "SECONDS",
        description = "How long to wait for the NIC's answer (default ${DEFAULT-VALUE}).")
    double timeoutSeconds;

    public Integer call() throws Exception
    {
        BadOption.range("--timeout", timeoutSeconds, 0.1, 3_600, 10);
        final String refused;
        try
        {
            refused = RegionRevocation.request(exchange, Duration.ofMillis((long)(timeoutSeconds * 1000)));
        }
        catch (final IllegalStateException ex)
        {
            System.err.println("spraynic deregister: " + ex.getMessage());
            return 2;
        }
        if (null != refused)
        {
            System.err.println("spraynic deregister: the NIC refused: " + refused);
            return 1;
        }
        System.out.println("spraynic deregister: the region " + exchange.resolve("nic.addr") + " names is deregistered");
        return 0;
    }
}
