package io.spraynic.pmd;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The {@code [eal]} table: how DPDK's Environment Abstraction Layer starts, turned into the argument
 * vector for {@code rte_eal_init} by {@link #toArguments(List)}.
 * <p>
 * Unset optional values are empty strings, empty lists or {@link #MEMORY_UNSET}, and then add nothing
 * to the arguments, leaving EAL's own default in force. Values are checked when the record becomes part
 * of a {@link NicConfig}, where every failure can be named by its key.
 *
 * @param program            argv[0]; DPDK only uses it in log lines.
 * @param lcores             EAL lcores: a core list ({@code "0"}, {@code "0-3,8"}) becomes {@code -l}, a
 *                           mapping ({@code "0@(0-1)"}) becomes {@code --lcores=}.
 * @param noHuge             run from anonymous memory instead of hugepages ({@code --no-huge}).
 * @param memoryMb           memory to reserve in MiB ({@code -m}), or {@link #MEMORY_UNSET}.
 * @param socketMem          hugepage MiB per NUMA socket ({@code --socket-mem=}), or empty.
 * @param hugeDir            hugetlbfs mount to use ({@code --huge-dir=}), or empty.
 * @param inMemory           keep all runtime state in memory ({@code --in-memory}); not with {@code noHuge}.
 * @param singleFileSegments one file per memseg list ({@code --single-file-segments}), needed by memif zero-copy.
 * @param noPci              do not scan the PCI bus ({@code --no-pci}).
 * @param filePrefix         runtime-directory prefix ({@code --file-prefix=}); two processes need two, or empty.
 * @param iovaMode           {@code "pa"}, {@code "va"} ({@code --iova-mode=}), or empty for EAL's choice.
 * @param logLevels          each becomes one {@code --log-level=}, e.g. {@code "pmd.net.tap:debug"}.
 * @param extraArgs          further EAL arguments, appended last, for options without a key here.
 */
public record EalConfig(
    String program,
    String lcores,
    boolean noHuge,
    int memoryMb,
    List<Integer> socketMem,
    String hugeDir,
    boolean inMemory,
    boolean singleFileSegments,
    boolean noPci,
    String filePrefix,
    String iovaMode,
    List<String> logLevels,
    List<String> extraArgs)
{
    /** {@link #memoryMb()} when {@code -m} is not passed. */
    public static final int MEMORY_UNSET = 0;

    /** Default argv[0]. */
    public static final String DEFAULT_PROGRAM = "spraynic";

    /** Default lcores: the main lcore on CPU 0; the Java workers register themselves later. */
    public static final String DEFAULT_LCORES = "0";

    /** Default memory with {@code --no-huge}; DPDK's own default of 64 MiB is too small for a real pool. */
    public static final int DEFAULT_NO_HUGE_MEMORY_MB = 512;

    /**
     * What runs anywhere, including CI: no hugepages, 512 MiB, no PCI scan, lcore 0.
     */
    public static final EalConfig DEFAULT = new EalConfig(
        DEFAULT_PROGRAM, DEFAULT_LCORES, true, DEFAULT_NO_HUGE_MEMORY_MB, List.of(), "", false, false, true,
        "", "", List.of(), List.of());

    /**
     * Copies the lists so the record stays immutable, and refuses nulls.
     */
    public EalConfig
    {
        Objects.requireNonNull(program, "program");
        Objects.requireNonNull(lcores, "lcores");
        socketMem = List.copyOf(socketMem);
        Objects.requireNonNull(hugeDir, "hugeDir");
        Objects.requireNonNull(filePrefix, "filePrefix");
        Objects.requireNonNull(iovaMode, "iovaMode");
        logLevels = List.copyOf(logLevels);
        extraArgs = List.copyOf(extraArgs);
    }

    /**
     * The exact argument vector for {@code rte_eal_init}, program name first, in a fixed order:
     * program, lcores, memory ({@code --no-huge}, {@code -m}, {@code --socket-mem}, {@code --huge-dir},
     * {@code --in-memory}, {@code --single-file-segments}), {@code --no-pci}, {@code --file-prefix},
     * {@code --iova-mode}, {@code --log-level}s, then each port's devices in port order, then
     * {@link #extraArgs()}.
     *
     * @param ports the ports whose devices EAL must create or allow-list (see {@link PortConfig#ealArguments()}).
     * @return a new, unmodifiable list.
     */
    public List<String> toArguments(final List<PortConfig> ports)
    {
        final List<String> args = new ArrayList<>();
        args.add(program);
        if (EalRules.isCoreList(lcores))
        {
            args.add("-l");
            args.add(lcores);
        }
        else
        {
            args.add("--lcores=" + lcores);
        }
        if (noHuge)
        {
            args.add("--no-huge");
        }
        if (memoryMb != MEMORY_UNSET)
        {
            args.add("-m");
            args.add(Integer.toString(memoryMb));
        }
        if (!socketMem.isEmpty())
        {
            args.add("--socket-mem=" + String.join(",", socketMem.stream().map(String::valueOf).toList()));
        }
        if (!hugeDir.isEmpty())
        {
            args.add("--huge-dir=" + hugeDir);
        }
        if (inMemory)
        {
            args.add("--in-memory");
        }
        if (singleFileSegments)
        {
            args.add("--single-file-segments");
        }
        if (noPci)
        {
            args.add("--no-pci");
        }
        if (!filePrefix.isEmpty())
        {
            args.add("--file-prefix=" + filePrefix);
        }
        if (!iovaMode.isEmpty())
        {
            args.add("--iova-mode=" + iovaMode);
        }
        for (final String logLevel : logLevels)
        {
            args.add("--log-level=" + logLevel);
        }
        for (final PortConfig port : ports)
        {
            args.addAll(port.ealArguments());
        }
        args.addAll(extraArgs);

        return List.copyOf(args);
    }

    /**
     * @param program argv[0].
     * @return a copy with another program name.
     */
    public EalConfig withProgram(final String program)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    /**
     * @param lcores a core list or lcore mapping.
     * @return a copy with other lcores.
     */
    public EalConfig withLcores(final String lcores)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    /**
     * @param memoryMb MiB for {@code -m}, or {@link #MEMORY_UNSET}.
     * @return a copy with another memory size.
     */
    public EalConfig withMemoryMb(final int memoryMb)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    /**
     * @param hugeDir  the hugetlbfs to take pages from.
     * @param memoryMb MiB of hugepages to reserve at start ({@code -m}).
     * @return a copy that runs from hugepages: no {@code --no-huge}, no {@code --socket-mem}, and
     * {@code --huge-unlink} added, so the pages return to the host when the process ends.
     */
    public EalConfig withHugepages(final String hugeDir, final int memoryMb)
    {
        final List<String> extra = new ArrayList<>(extraArgs);
        if (!extra.contains("--huge-unlink"))
        {
            extra.add("--huge-unlink");
        }
        return new EalConfig(program, lcores, false, memoryMb, List.of(), hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extra);
    }

    /**
     * @param memoryMb MiB of ordinary memory for {@code -m}.
     * @return a copy that runs with {@code --no-huge}, without the options that only hugepages take.
     */
    public EalConfig withoutHugepages(final int memoryMb)
    {
        final List<String> extra = new ArrayList<>(extraArgs);
        extra.removeIf(arg -> arg.startsWith("--huge-unlink"));
        return new EalConfig(program, lcores, true, memoryMb, List.of(), "", false, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extra);
    }

    /**
     * @param filePrefix a runtime-directory prefix, or empty for EAL's default.
     * @return a copy with another file prefix, e.g. to run a second process beside the first.
     */
    public EalConfig withFilePrefix(final String filePrefix)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    /**
     * @param inMemory whether to pass {@code --in-memory}.
     * @return a copy with {@code --in-memory} on or off.
     */
    public EalConfig withInMemory(final boolean inMemory)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    /**
     * @param singleFileSegments whether to pass {@code --single-file-segments}.
     * @return a copy with {@code --single-file-segments} on or off.
     */
    public EalConfig withSingleFileSegments(final boolean singleFileSegments)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    /**
     * @param logLevels {@code --log-level} values.
     * @return a copy with other log levels.
     */
    public EalConfig withLogLevels(final List<String> logLevels)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    /**
     * @param extraArgs arguments appended last.
     * @return a copy with other extra arguments.
     */
    public EalConfig withExtraArgs(final List<String> extraArgs)
    {
        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }
}
