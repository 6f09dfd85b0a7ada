# Not a candidate anyone would write: its wrapper kills its own process, as a crash in a
# native extension would; the recorder must judge the other cases of its child anyway.
import os
import signal


def relu(self):
    os.kill(os.getpid(), signal.SIGKILL)
