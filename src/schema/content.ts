// Universal items and their content parts (docs/events.md, "Items").
import { orNull, z } from './zod.js';

export const TextPart = z.object({ type: z.literal('text'), text: z.string() }).openapi('TextPart');
export const JsonPart = z.object({ type: z.literal('json'), json: z.unknown() }).openapi('JsonPart');
export const ToolCallPart = z
  .object({
    type: z.literal('tool_call'),
    name: z.string(),
    arguments: z.string().openapi({ description: 'JSON-encoded arguments' }),
    call_id: z.string(),
  })
  .openapi('ToolCallPart');
export const ToolResultPart = z
  .object({ type: z.literal('tool_result'), call_id: z.string(), output: z.string() })
  .openapi('ToolResultPart');
export const FileAction = z.enum(['read', 'write', 'patch']).openapi('FileAction');
export const FileRefPart = z
  .object({
    type: z.literal('file_ref'),
    path: z.string(),
    action: FileAction,
    diff: z.string().nullable().optional().openapi({ description: 'Unified diff, for writes and patches' }),
  })
  .openapi('FileRefPart');
export const ImagePart = z
  .object({ type: z.literal('image'), path: z.string(), mime: z.string().nullable().optional() })
  .openapi('ImagePart');
export const ReasoningPart = z
  .object({ type: z.literal('reasoning'), text: z.string(), visibility: z.enum(['public', 'private']) })
  .openapi('ReasoningPart');
export const StatusPart = z
  .object({ type: z.literal('status'), label: z.string(), detail: z.string().nullable().optional() })
  .openapi('StatusPart');

export const ContentPart = z
  .discriminatedUnion('type', [
    TextPart,
    JsonPart,
    ToolCallPart,
    ToolResultPart,
    FileRefPart,
    ImagePart,
    ReasoningPart,
    StatusPart,
  ])
  .openapi('ContentPart');
export type ContentPart = z.infer<typeof ContentPart>;

export const ItemKind = z.enum(['message', 'tool_call', 'tool_result', 'system', 'status', 'unknown']).openapi('ItemKind');
export type ItemKind = z.infer<typeof ItemKind>;
export const ItemRole = z.enum(['user', 'assistant', 'system', 'tool']).openapi('ItemRole');
export type ItemRole = z.infer<typeof ItemRole>;
export const ItemStatus = z.enum(['in_progress', 'completed', 'failed']).openapi('ItemStatus');
export type ItemStatus = z.infer<typeof ItemStatus>;

export const UniversalItem = z
  .object({
    item_id: z.string().openapi({ description: 'Daemon-generated id (itm_…)' }),
    native_item_id: z.string().nullable().openapi({ description: "The agent's own id for this item, when it has one" }),
    parent_id: z.string().nullable().openapi({ description: 'item_id of the message this tool item belongs to' }),
    kind: ItemKind,
    role: orNull(ItemRole),
    content: z.array(ContentPart),
    status: ItemStatus,
  })
  .openapi('UniversalItem');
export type UniversalItem = z.infer<typeof UniversalItem>;
