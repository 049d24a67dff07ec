package io.spraynic.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * The {@code spraynic} command. Errors reach the user as one sentence saying what went wrong and
 * what to do; {@code SPRAYNIC_DEBUG=1} adds the stack trace.
 */
@Command(
    name = "spraynic",
    mixinStandardHelpOptions = true,
    versionProvider = SprayNic.Version.class,
    description = "SprayNIC: a loss-tolerant multipath RDMA transport on a DPDK kernel-bypass datapath.",
    subcommands = {
        DemoCommand.class,
        BenchCommand.class,
        ConfigCommand.class,
        DecodeCommand.class,
        StatCommand.class,
        NicCommand.class,
        ClientCommand.class,
        TransferCommand.class,
        ExperimentCommand.class,
        CommandLine.HelpCommand.class
    })
public final class SprayNic implements Runnable
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(final String[] args)
    {
        System.exit(execute(args));
    }

    /**
     * Runs the command line and returns its exit code (0 success, 1 failure, 2 usage error).
     */
    public static int execute(final String... args)
    {
        final CommandLine commandLine = new CommandLine(new SprayNic());
        commandLine.setExecutionExceptionHandler((ex, cmd, parseResult) ->
        {
            final PrintWriter err = cmd.getErr();
            err.println("spraynic " + cmd.getCommandName() + ": " + oneSentence(ex));
            if (null != System.getenv("SPRAYNIC_DEBUG"))
            {
                ex.printStackTrace(err);
            }
            err.flush();
            return 1;
        });
        return commandLine.execute(args);
    }

    static String oneSentence(final Throwable ex)
    {
        Throwable cause = ex;
        while (cause.getCause() != null && (cause.getMessage() == null || cause instanceof ExceptionInInitializerError))
        {
            cause = cause.getCause();
        }
        final String message = cause.getMessage();
        return null == message ? cause.getClass().getSimpleName() : message;
    }

    static final class Version implements CommandLine.IVersionProvider
    {
        public String[] getVersion()
        {
            final String version = SprayNic.class.getPackage().getImplementationVersion();
            return new String[] {"spraynic " + (null == version ? "development build" : version) +
                " (Java " + Runtime.version() + ")"};
        }
    }
}
