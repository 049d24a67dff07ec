package io.spraynic.datapath.nic.ipc;

/** The NIC refused a client's command: its reason, and a code ({@code IpcMessages.ERR_*}) a program can act on. */
public final class NicRefusedException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    private final int commandType;
    private final int code;

    NicRefusedException(final int commandType, final int code, final String message)
    {
        super(message);
        this.commandType = commandType;
        this.code = code;
    }

    /** @return the refused command's type ({@code IpcMessages.REGISTER}, ...). */
    public int commandType()
    {
        return commandType;
    }

    /** @return why, as {@code IpcMessages.ERR_*}: {@link IpcMessages#ERR_LIMIT} for a limit of the NIC, ... */
    public int code()
    {
        return code;
    }
}
