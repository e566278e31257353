// Claude's human-in-the-loop requests: `control_request` can_use_tool. Every tool the CLI wants to
// run without a standing permission is asked here, including the two that are really questions to
// the user: AskUserQuestion (multiple choice) and ExitPlanMode (approve a plan). Pure.
import type { Draft } from '../types.js';
import { AskUserQuestionInput, CanUseTool, ExitPlanModeInput } from './native.js';

/** The draft for a control request, or undefined when it is not one we know. */
export function questionOrPermission(requestId: string, request: { subtype: string }): Draft | undefined {
  const parsed = CanUseTool.safeParse(request);
  if (!parsed.success) return undefined;
  const { tool_name, input, permission_suggestions, blocked_path, tool_use_id, description } = parsed.data;

  if (tool_name === 'AskUserQuestion') {
    const ask = AskUserQuestionInput.safeParse(input);
    if (ask.success && ask.data.questions.length > 0) {
      // A batch of questions becomes ONE question: the prompt lists every question, one a line, and
      // the options are the first question's (the only ones a single-question client can offer).
      // The answer (string[][], one array per question, in order) maps back question by question.
      const questions = ask.data.questions;
      return {
        type: 'question.requested',
        data: {
          question_id: requestId,
          prompt: questions.map((q) => q.question).join('\n'),
          options: (questions[0]!.options ?? []).map((o) => o.label),
          status: 'requested',
        },
      };
    }
  }
  if (tool_name === 'ExitPlanMode') {
    const plan = ExitPlanModeInput.safeParse(input);
    if (plan.success) {
      return {
        type: 'question.requested',
        data: { question_id: requestId, prompt: plan.data.plan, options: ['approve', 'keep planning'], status: 'requested' },
      };
    }
  }
  // Anything else (and a question whose input we cannot read) is a plain permission request.
  const metadata: Record<string, unknown> = { input };
  if (permission_suggestions !== undefined) metadata.suggestions = permission_suggestions;
  if (blocked_path !== undefined) metadata.blocked_path = blocked_path;
  if (tool_use_id !== undefined) metadata.tool_use_id = tool_use_id;
  if (description !== undefined) metadata.description = description;
  return { type: 'permission.requested', data: { permission_id: requestId, action: tool_name, status: 'requested', metadata } };
}
