package mooncake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
)

// Copy and move tasks (upstream's create_copy_task, create_move_task and
// query_task) ask the master to replicate an object onto more segments, or
// to move one replica to another segment. The master hands the task to the
// client that holds the source replica, which runs it in the background
// (upstream's clients poll for tasks once a second); QueryTask and
// WaitTask follow it. The embedded engine runs a task as it is created, so
// it is finished by the first query.

// TaskID identifies a task (upstream's UUID; String is its text form).
type TaskID struct{ First, Second uint64 }

func (id TaskID) String() string { return SegmentID(id).String() }

// TaskType says what a task does.
type TaskType int32

// Task types (upstream's TaskType).
const (
	TaskCopy TaskType = 0 // REPLICA_COPY
	TaskMove TaskType = 1 // REPLICA_MOVE
)

func (t TaskType) String() string {
	switch t {
	case TaskCopy:
		return "copy"
	case TaskMove:
		return "move"
	}
	return "TaskType(" + strconv.Itoa(int(t)) + ")"
}

// TaskStatus is where a task is (upstream's TaskStatus).
type TaskStatus int32

// Task states.
const (
	TaskPending    TaskStatus = 0
	TaskProcessing TaskStatus = 1
	TaskFailed     TaskStatus = 2
	TaskSucceeded  TaskStatus = 3 // upstream's SUCCESS
)

var taskStatusNames = [...]string{"pending", "processing", "failed", "succeeded"}

func (s TaskStatus) String() string {
	if s >= 0 && int(s) < len(taskStatusNames) {
		return taskStatusNames[s]
	}
	return "TaskStatus(" + strconv.Itoa(int(s)) + ")"
}

// Done reports whether the task has finished, either way.
func (s TaskStatus) Done() bool { return s == TaskFailed || s == TaskSucceeded }

// TaskInfo is a task's state (upstream's QueryTaskResponse).
type TaskInfo struct {
	ID      TaskID
	Type    TaskType
	Status  TaskStatus
	Created time.Time
	Updated time.Time
	// AssignedClient is the id of the client that runs the task (zero in
	// the embedded engine, whose clients have no ids).
	AssignedClient TaskID
	Message        string // upstream's, e.g. why it failed
}

// ErrTaskFailed is wrapped by WaitTask's error for a task that failed.
var ErrTaskFailed = errors.New("task failed")

// maxCopyTargets bounds a copy task's targets: a replica per segment,
// and no cluster has more segments than this.
const maxCopyTargets = 1024

// CreateCopyTask asks the master to copy key's object onto each of the
// segments named in targets (Store.Hostname of their clients). Targets
// that hold a replica already are left as they are. Refused with
// ErrInvalidParams (no target, one that is not mounted, one named twice,
// more than 1,024),
// ErrObjectNotFound, ErrUnavailableInCurrentStatus (a target being
// unmounted).
func (s *Store) CreateCopyTask(key string, targets []string) (TaskID, error) {
	const op = OpCreateCopyTask
	if len(targets) > maxCopyTargets {
		return TaskID{}, &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: fmt.Errorf("%d target segments, at most %d", len(targets), maxCopyTargets)}
	}
	for i, t := range targets {
		if t == "" || strings.IndexByte(t, 0) >= 0 {
			return TaskID{}, &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: fmt.Errorf("target segment %q is empty or holds NUL", t)}
		}
		if slices.Contains(targets[:i], t) {
			return TaskID{}, &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: fmt.Errorf("target segment %q named twice", t)}
		}
	}
	c := s.c()
	if !c.gate.Enter() {
		return TaskID{}, closedErr(op, key)
	}
	id, rc := c.handle.CreateCopyTask(key, targets)
	c.gate.Leave()
	return TaskID(id), codeErr(op, key, int64(rc))
}

// CreateMoveTask asks the master to move key's replica on segment source
// to segment target. Refused with ErrInvalidParams (source holds no
// replica of key, equals target, or target is not mounted) and as
// CreateCopyTask.
func (s *Store) CreateMoveTask(key, source, target string) (TaskID, error) {
	const op = OpCreateMoveTask
	c := s.c()
	if !c.gate.Enter() {
		return TaskID{}, closedErr(op, key)
	}
	id, rc := c.handle.CreateMoveTask(key, source, target)
	c.gate.Leave()
	return TaskID(id), codeErr(op, key, int64(rc))
}

// QueryTask returns a task's state: ErrTaskNotFound for an id the master
// does not know, or has forgotten (it prunes finished tasks after a while).
func (s *Store) QueryTask(id TaskID) (TaskInfo, error) {
	const op = OpQueryTask
	c := s.c()
	if !c.gate.Enter() {
		return TaskInfo{}, closedErr(op, id.String())
	}
	t, rc := c.handle.QueryTask(cstore.SegmentID(id))
	c.gate.Leave()
	if err := codeErr(op, id.String(), int64(rc)); err != nil {
		return TaskInfo{}, err
	}
	return TaskInfo{
		ID: TaskID(t.ID), Type: TaskType(t.Type), Status: TaskStatus(t.Status),
		Created: time.UnixMilli(t.CreatedMs), Updated: time.UnixMilli(t.UpdatedMs),
		AssignedClient: TaskID(t.AssignedClient), Message: t.Message,
	}, nil
}

// WaitTask queries the task every poll (100 ms when poll <= 0) until it has
// finished or ctx is done. It returns the last state it read, and an error
// when the task failed (wrapping ErrTaskFailed, with upstream's message),
// when a query failed, or ctx's error.
func (s *Store) WaitTask(ctx context.Context, id TaskID, poll time.Duration) (TaskInfo, error) {
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	var timer *time.Timer
	for {
		t, err := s.QueryTask(id)
		switch {
		case err != nil:
			return t, err
		case t.Status == TaskFailed:
			return t, &Error{Op: OpQueryTask, Key: id.String(), Err: fmt.Errorf("%w: %s", ErrTaskFailed, t.Message)}
		case t.Status.Done():
			return t, nil
		}
		if timer == nil {
			timer = time.NewTimer(poll)
			defer timer.Stop()
		} else {
			timer.Reset(poll)
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-timer.C:
		}
	}
}
