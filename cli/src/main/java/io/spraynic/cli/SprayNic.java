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
        HealthCommand.class,
        MetricsCommand.class,
        NicCommand.class,
        ClientCommand.class,
        CaptureCommand.class,
        TransferCommand.class,
        ExperimentCommand.class,
        ConformanceCommand.class,
        DeregisterCommand.class,
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
        final CommandLine commandLine = NumberConverters.register(new CommandLine(new SprayNic()));
        commandLine.setExecutionExceptionHandler((ex, cmd, parseResult) ->
        {
            final PrintWriter err = cmd.getErr();
            err.println(cmd.getCommandSpec().qualifiedName() + ": " + oneSentence(ex));
            if (null != System.getenv("SPRAYNIC_DEBUG"))
            {
                ex.printStackTrace(err);
            }
            err.flush();
            return ex instanceof BadOption ? USAGE_ERROR : 1;
        });
        // a bad argument is one sentence, never the usage: that is what --help is for
        commandLine.setParameterExceptionHandler((ex, arguments) ->
        {
            final CommandLine cmd = ex.getCommandLine();
            final PrintWriter err = cmd.getErr();
            err.println(cmd.getCommandSpec().qualifiedName() + ": " + badArgument(ex));
            err.flush();
            return USAGE_ERROR;
        });
        return commandLine.execute(args);
    }

    static final int USAGE_ERROR = 2;

    /**
     * @return one sentence: for a value of the wrong type, the option, the value, what it is not and a value that
     * works ({@code --size 2x: not a size: ...; try --size 8m}); for anything else picocli's message and where to look.
     */
    static String badArgument(final CommandLine.ParameterException ex)
    {
        final String help = "; " + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help lists the options";
        if (ex.getCause() instanceof CommandLine.TypeConversionException conversion &&
            ex.getArgSpec() instanceof CommandLine.Model.OptionSpec option)
        {
            final String name = option.longestName();
            final String example = example(option);
            return name + " " + ex.getValue() + ": " + conversion.getMessage() +
                (null == example ? help : "; try " + name + " " + example);
        }
        final String message = null == ex.getMessage() ? ex.getClass().getSimpleName() : ex.getMessage();
        return message.replace(System.lineSeparator(), " ").strip() + help;
    }

    // the option's default, else a value of its type
    private static String example(final CommandLine.Model.OptionSpec option)
    {
        final String defaultValue = option.defaultValue();
        if (null != defaultValue && !defaultValue.isEmpty())
        {
            return defaultValue;
        }
        final Class<?> type = option.type().isArray() ? option.type().getComponentType() : option.type();
        if (option.converters().length > 0 && option.converters()[0] instanceof SizeConverter)
        {
            return "64k";
        }
        if (type == double.class || type == Double.class)
        {
            return "1.5";
        }
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class)
        {
            return "1";
        }
        return null;
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
