/* output_name.h — the session numbers behind %n in output name patterns
 * (pp_output_expand, output_name.c). */
#ifndef PP_CAPTURE_OUTPUT_NAME_H
#define PP_CAPTURE_OUTPUT_NAME_H

/* This process's next session number: 0 for the first session that writes
 * a patterned output, then 1, 2, ... (thread-safe). */
unsigned pp_output_next_session_no(void);

#endif
