// SPDX-License-Identifier: MIT
/* Java threads: identity (gettid, Java name) at start, end, and for the
 * threads already running when a late attach begins. */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "vmstructs.h"

static void put_thread(struct agent *a, uint32_t nstid, uint32_t event,
		       const char *name)
{
	struct jpb_rec_thread r = {
		.tid = a->same_pidns ? nstid : 0,
		.nstid = nstid,
		.pid = a->host_pid,
		.event = event,
		.name = jpb_str_c(name),
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_THREAD, agent_now(), &r);
}

/* ON_THREAD: the callback runs on T itself, so gettid() is T's tid;
 * otherwise HotSpot's own record of it is read (0 if unavailable). */
void threads_record(struct agent *a, JNIEnv *jni, jthread t, uint32_t event,
		    int on_thread)
{
	jvmtiEnv *e = a->jvmti;
	jvmtiThreadInfo info;
	memset(&info, 0, sizeof(info));
	if ((*e)->GetThreadInfo(e, t, &info) != JVMTI_ERROR_NONE)
		info.name = NULL;
	uint32_t tid = on_thread ? agent_gettid() : vms_thread_tid(jni, t);
	put_thread(a, tid, event, info.name);
	if (info.name)
		(*e)->Deallocate(e, (unsigned char *)info.name);
	if (jni) {
		if (info.thread_group)
			(*jni)->DeleteLocalRef(jni, info.thread_group);
		if (info.context_class_loader)
			(*jni)->DeleteLocalRef(jni, info.context_class_loader);
	}
}

void threads_record_all(struct agent *a, JNIEnv *jni)
{
	jvmtiEnv *e = a->jvmti;
	jint n = 0;
	jthread *ts = NULL;
	if ((*e)->GetAllThreads(e, &n, &ts) != JVMTI_ERROR_NONE) {
		aq_note(&a->q, JPB_NOTE_WARN, "GetAllThreads failed: "
			"threads running before attach are not listed");
		return;
	}
	for (jint i = 0; i < n; i++) {
		threads_record(a, jni, ts[i], JPB_THREAD_SEEN, 0);
		if (jni)
			(*jni)->DeleteLocalRef(jni, ts[i]);
	}
	(*e)->Deallocate(e, (unsigned char *)ts);
}
