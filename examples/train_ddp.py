#!/usr/bin/python3
"""A PyTorch DDP training job that keeps Cohort's checkpoint contract.

Runs on CPU with Debian's python3-torch (the gloo backend), one process
per task: Cohort starts it on every node with the rendezvous torchrun
would set (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK), so
there is no launcher:

    cohort submit --nodes 2 --checkpoint-dir /shared/ckpt \\
        -- /usr/bin/python3 /path/to/train_ddp.py --steps 200

(Debian's torch is /usr/bin/python3's; a python3 earlier on PATH, from
pyenv or a venv without torch, would not find it.)

What it does for Cohort (docs: README "The checkpoint contract"):
- resumes from $COHORT_RESUME_CHECKPOINT when the controller hands one
  over (a restart after a failure, a requeue, a preemption), and starts
  from scratch when it is empty;
- rank 0 writes a checkpoint every --checkpoint-every steps and when it
  gets SIGUSR1 (the job's --checkpoint-signal, sent before a drain, a
  requeue or a preemption), each atomically: the state goes to a
  temporary file, fsync, rename; then $COHORT_CHECKPOINT_DIR/LATEST gets
  "STEP PATH" the same way, which is what the agent reports;
- on SIGTERM it stops at the end of the step it is in and exits 143 (a
  checkpoint is written only when one was asked for: SIGTERM follows the
  checkpoint signal when Cohort wanted one);
- rewrites $COHORT_PROGRESS_FILE with its step, for --hang-timeout.

The model is a linear regression on synthetic data drawn from a fixed
seed per (step, rank), so a run resumed from step K does exactly what an
uninterrupted run does from K on. Rank 0 keeps a small ledger in the
checkpoint directory (runs: "START_STEP RESTART_COUNT", one line per
start; checkpoints: one step a line) for whoever wants to check the
story.
"""

import argparse
import datetime
import os
import signal
import sys
import time

try:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:
    sys.exit("train_ddp: cannot import torch (%s): run it with Debian's "
             "/usr/bin/python3 (apt-get install python3-torch)" % e)

want_checkpoint = False
want_stop = False


def on_usr1(signum, frame):
    global want_checkpoint
    want_checkpoint = True


def on_term(signum, frame):
    global want_stop
    want_stop = True


def say(rank, msg):
    print("train_ddp: rank %d: %s" % (rank, msg), flush=True)


def env_int(name, default):
    v = os.environ.get(name, "")
    if v == "":
        return default
    try:
        return int(v)
    except ValueError:
        sys.exit("train_ddp: %s=%r is not a number" % (name, v))


def atomic_write(path, write):
    """write(f) into path.tmp, flush it to disk, then rename it to path."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    d = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(d)
    finally:
        os.close(d)


def save_checkpoint(ckdir, step, model, opt, keep):
    path = os.path.join(ckdir, "ckpt-%08d.pt" % step)
    state = {"step": step, "model": model.state_dict(),
             "optimizer": opt.state_dict()}
    atomic_write(path, lambda f: torch.save(state, f))
    line = ("%d %s\n" % (step, path)).encode()
    atomic_write(os.path.join(ckdir, "LATEST"), lambda f: f.write(line))
    with open(os.path.join(ckdir, "checkpoints"), "a") as f:
        f.write("%d\n" % step)
    # Keep the newest few; LATEST never names one that is removed.
    old = sorted(n for n in os.listdir(ckdir)
                 if n.startswith("ckpt-") and n.endswith(".pt"))
    for n in old[:-keep]:
        try:
            os.unlink(os.path.join(ckdir, n))
        except FileNotFoundError:
            pass
    return path


def batch(step, rank, dim, size, w_true):
    g = torch.Generator().manual_seed(step * 1000003 + rank)
    x = torch.randn(size, dim, generator=g)
    y = x @ w_true + 0.01 * torch.randn(size, 1, generator=g)
    return x, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--checkpoint-every", type=int, default=20)
    ap.add_argument("--step-time", type=float, default=0.05,
                    help="seconds to sleep per step (a stand-in for work)")
    ap.add_argument("--keep", type=int, default=3,
                    help="checkpoints to keep")
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()
    if args.steps < 1 or args.checkpoint_every < 1 or args.keep < 1:
        ap.error("--steps, --checkpoint-every and --keep want at least 1")

    rank = env_int("RANK", 0)
    world = env_int("WORLD_SIZE", 1)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    os.environ.setdefault("RANK", str(rank))
    os.environ.setdefault("WORLD_SIZE", str(world))
    # gloo picks its interface from the host name; on one machine (and
    # cohort-local) the loopback address is the one the ranks share.
    if (os.environ["MASTER_ADDR"].startswith("127.") and
            "GLOO_SOCKET_IFNAME" not in os.environ):
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    ckdir = os.environ.get("COHORT_CHECKPOINT_DIR", "")
    resume = os.environ.get("COHORT_RESUME_CHECKPOINT", "")
    progress = os.environ.get("COHORT_PROGRESS_FILE", "")
    restarts = env_int("COHORT_RESTART_COUNT", 0)
    signal.signal(signal.SIGUSR1, on_usr1)
    signal.signal(signal.SIGTERM, on_term)
    torch.set_num_threads(1)

    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)
    model = torch.nn.Linear(args.dim, 1)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    step = 0
    if resume:
        # Every rank reads it (shared storage); the state is the same.
        state = torch.load(resume, map_location="cpu")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        step = int(state["step"])
        say(rank, "resumed from checkpoint step %d (%s), restart %d" %
            (step, resume, restarts))
    else:
        say(rank, "starting from scratch (world size %d)" % world)
    ddp = DDP(model)
    if rank == 0 and ckdir:
        os.makedirs(ckdir, exist_ok=True)
        with open(os.path.join(ckdir, "runs"), "a") as f:
            f.write("%d %d\n" % (step, restarts))
    elif rank == 0:
        say(rank, "no COHORT_CHECKPOINT_DIR (submit with --checkpoint-dir): "
            "no checkpoints, a restart starts over")

    w_true = torch.arange(1, args.dim + 1, dtype=torch.float32).view(-1, 1)
    w_true /= args.dim
    loss_fn = torch.nn.MSELoss()
    first = last = None
    global want_checkpoint
    while step < args.steps and not want_stop:
        x, y = batch(step, rank, args.dim, args.batch, w_true)
        opt.zero_grad()
        loss = loss_fn(ddp(x), y)
        loss.backward()     # gradients are averaged across ranks here
        opt.step()
        step += 1
        last = loss.item()
        if first is None:
            first = last
        if progress:
            try:
                with open(progress, "w") as f:
                    f.write("%d\n" % step)
            except OSError:
                pass
        if rank == 0 and ckdir and (step % args.checkpoint_every == 0 or
                                    want_checkpoint):
            asked = want_checkpoint
            want_checkpoint = False
            path = save_checkpoint(ckdir, step, model, opt, args.keep)
            say(rank, "checkpoint at step %d: %s%s" % (step, path,
                " (asked for by SIGUSR1)" if asked else ""))
        if step % 20 == 0:
            say(rank, "step %d loss %.5f" % (step, last))
        if args.step_time > 0:
            time.sleep(args.step_time)

    if want_stop:
        say(rank, "SIGTERM: stopping at step %d" % step)
        sys.exit(143)
    # The same weights everywhere, or DDP did not do its job.
    digest = sum(float(p.detach().double().sum()) for p in model.parameters())
    say(rank, "finished: step %d/%d, loss %s (%s when this run began), "
        "weights %.6f" %
        (step, args.steps, "%.5f" % last if last is not None else "-",
         "%.5f" % first if first is not None else "-", digest))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
